//! The CPU slice an engine's threads ask Linux for: longer than the default, so that query
//! work gives way at once to a gateway, client or shell waking up beside it.
//!
//! Since Linux 6.12 a thread of the normal scheduling class may name its own slice
//! (`sched_attr.sched_runtime`, 0.1 to 100 ms; the default is 0.75 ms times 1 + log2 of the
//! CPUs, at most 3 ms), and a thread that wakes up with a shorter slice than the running
//! one's takes the CPU at once (the EEVDF scheduler's `PREEMPT_SHORT`). Otherwise a thread
//! woken on a CPU where another runs waits for that one's slice to end, even with the other
//! CPU idle, since the scheduler keeps a thread that ran moments ago where its cache is.
//! Where the gateway, its engines and clients share cores (the embedded default, one host),
//! that decided who waited: the gateway's or a client's wake-up queued for up to 0.3 ms
//! behind an engine planning a statement (BENCHMARKS.md, case 2).
//!
//! The slice changes who runs first, not how much CPU each thread gets (that is the weight,
//! from `nice`, which is kept). Kernels before 6.12 accept the request and ignore it.

use std::io;
use std::time::Duration;

/// A multi-threaded tokio runtime whose threads, and the calling thread (and so the threads
/// and processes it starts), ask for `slice` (zero: the kernel's default). A refused request
/// is logged and changes nothing else.
pub fn runtime(slice: Duration) -> io::Result<tokio::runtime::Runtime> {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder.enable_all();
    if !slice.is_zero() {
        match request(slice) {
            Ok(()) => tracing::debug!("threads ask for a CPU slice of {slice:?}"),
            Err(e) => tracing::info!(
                "the CPU slice of {slice:?} was refused ({e}); threads keep the kernel's"
            ),
        }
        // Threads inherit the slice; asking again covers a runtime built on another thread.
        builder.on_thread_start(move || drop(request(slice)));
    }
    builder.build()
}

/// A `--cpu-slice` flag: `0` (the kernel's default) or a duration such as `5ms`.
pub fn parse_flag(text: &str) -> Result<Duration, String> {
    match text.trim() {
        "0" => Ok(Duration::ZERO),
        text => humantime::parse_duration(text).map_err(|e| {
            format!("`{text}` is not a CPU slice ({e}); write e.g. `5ms`, `500us` or `0`")
        }),
    }
}

/// Asks for `slice` for the calling thread, keeping its policy and nice value; a thread
/// under another policy than the normal ones (an operator's `chrt`) is left as it is.
pub fn request(slice: Duration) -> io::Result<()> {
    let mut attr = get_attr()?;
    if attr.policy != SCHED_OTHER && attr.policy != SCHED_BATCH {
        return Ok(());
    }
    attr.size = SCHED_ATTR_SIZE_VER0;
    attr.flags = 0;
    attr.runtime = u64::try_from(slice.as_nanos()).unwrap_or(u64::MAX);
    set_attr(&attr)
}

/// The calling thread's slice, as the kernel reports it (`None` before Linux 6.12).
pub fn current() -> io::Result<Option<Duration>> {
    let attr = get_attr()?;
    Ok((attr.runtime != 0).then(|| Duration::from_nanos(attr.runtime)))
}

/// `sched_attr`, as far as its first version (`SCHED_ATTR_SIZE_VER0`).
#[repr(C)]
#[derive(Default)]
struct SchedAttr {
    size: u32,
    policy: u32,
    flags: u64,
    nice: i32,
    priority: u32,
    runtime: u64,
    deadline: u64,
    period: u64,
}

const SCHED_ATTR_SIZE_VER0: u32 = 48;
const SCHED_OTHER: u32 = 0;
const SCHED_BATCH: u32 = 3;

// No crate wraps sched_setattr(2) for a normal thread's slice (nix and thread-priority cover
// policies and priorities only), so these two calls are made by hand.
#[allow(unsafe_code)]
fn get_attr() -> io::Result<SchedAttr> {
    let mut attr = SchedAttr::default();
    // SAFETY: sched_getattr(2) writes at most `size` (48) bytes into `attr`, a live repr(C)
    // struct of exactly that size; pid 0 is the calling thread.
    let rc = unsafe {
        nix::libc::syscall(
            nix::libc::SYS_sched_getattr,
            0,
            &mut attr as *mut SchedAttr,
            SCHED_ATTR_SIZE_VER0,
            0,
        )
    };
    if rc == 0 {
        Ok(attr)
    } else {
        Err(io::Error::last_os_error())
    }
}

#[allow(unsafe_code)]
fn set_attr(attr: &SchedAttr) -> io::Result<()> {
    // SAFETY: sched_setattr(2) reads `attr.size` (48) bytes from `attr`, a live repr(C)
    // struct of that size; pid 0 is the calling thread.
    let rc =
        unsafe { nix::libc::syscall(nix::libc::SYS_sched_setattr, 0, attr as *const SchedAttr, 0) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `check` on a thread of its own: a slice requested there does not reach the test
    /// harness's other threads.
    fn on_own_thread<T: Send + 'static>(check: impl FnOnce() -> T + Send + 'static) -> T {
        std::thread::spawn(check).join().expect("test thread")
    }

    #[test]
    fn flags_name_a_duration_or_zero() {
        assert_eq!(parse_flag("5ms"), Ok(Duration::from_millis(5)));
        assert_eq!(parse_flag("500us"), Ok(Duration::from_micros(500)));
        assert_eq!(parse_flag("0"), Ok(Duration::ZERO));
        assert!(parse_flag("long").unwrap_err().contains("not a CPU slice"));
    }

    #[test]
    fn a_thread_and_the_threads_it_starts_keep_the_slice_and_the_nice_value() {
        let default = on_own_thread(|| current().unwrap());
        let (nice_before, nice_after, own, child) = on_own_thread(|| {
            let nice_before = get_attr().unwrap().nice;
            request(Duration::from_millis(5)).unwrap();
            let child = std::thread::spawn(|| current().unwrap()).join().unwrap();
            (
                nice_before,
                get_attr().unwrap().nice,
                current().unwrap(),
                child,
            )
        });
        assert_eq!(nice_after, nice_before);
        assert_eq!(child, own);
        // Kernels before 6.12 accept the request and report no slice.
        if default.is_some() {
            assert_eq!(own, Some(Duration::from_millis(5)));
        }
    }

    #[test]
    fn runtime_threads_ask_for_the_slice() {
        let (runtime, main) = on_own_thread(|| {
            let runtime = runtime(Duration::from_micros(700)).unwrap();
            (runtime, current().unwrap())
        });
        let worker =
            runtime.block_on(async { tokio::spawn(async { current().unwrap() }).await.unwrap() });
        assert_eq!(worker, main);
        if main.is_some() {
            assert_eq!(main, Some(Duration::from_micros(700)));
        }
    }
}
