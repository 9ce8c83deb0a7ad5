//! MIT krb5's GSS-API (RFC 2744), loaded at run time from `libgssapi_krb5.so.2` only when
//! authentication KERBEROS is configured, so that building the gateway needs no krb5 headers
//! or libclang and the `kumiho` binary starts on hosts without the library.
//!
//! The C declarations below are the few the acceptor uses, written from RFC 2744 and MIT's
//! `gssapi/gssapi.h` (the Linux layout: MIT packs these structures on macOS). Above them, a
//! small safe layer: [`Name`], [`Credentials`], [`AcceptorContext`] and the library's output
//! buffers release themselves; every status becomes the text `gss_display_status` gives it.
//!
//! The library is looked for as `libgssapi_krb5.so.2`, then `libgssapi_krb5.so`, or at the
//! path in [`LIBRARY_VARIABLE`]. It is loaded once and never unloaded: every handle holds a
//! `&'static` reference to its functions.

use std::ffi::{c_int, c_void, OsString};
use std::ptr;
use std::sync::{Arc, OnceLock};

use libloading::Library;

/// The environment variable that names the GSS-API library to load instead of MIT krb5's
/// usual names (e.g. `/opt/krb5/lib/libgssapi_krb5.so.2`).
pub const LIBRARY_VARIABLE: &str = "KUMIHO_GSSAPI_LIBRARY";

/// The names the library is looked for under, in order, through the dynamic loader's path.
const LIBRARY_NAMES: [&str; 2] = ["libgssapi_krb5.so.2", "libgssapi_krb5.so"];

/// The Debian and Ubuntu package that installs `libgssapi_krb5.so.2`.
const DEBIAN_PACKAGE: &str = "libgssapi-krb5-2";

// RFC 2744's types, as MIT's gssapi.h declares them.
#[allow(non_camel_case_types)]
type OM_uint32 = u32;
#[allow(non_camel_case_types)]
type gss_name_t = *mut c_void;
#[allow(non_camel_case_types)]
type gss_cred_id_t = *mut c_void;
#[allow(non_camel_case_types)]
type gss_ctx_id_t = *mut c_void;
/// `gss_OID_set` and `gss_channel_bindings_t`: only ever passed as null here.
#[allow(non_camel_case_types)]
type gss_opaque_t = *mut c_void;

#[repr(C)]
#[allow(non_camel_case_types)]
struct gss_buffer_desc {
    length: usize,
    value: *mut c_void,
}

#[repr(C)]
#[allow(non_camel_case_types)]
struct gss_OID_desc {
    length: OM_uint32,
    elements: *mut c_void,
}

const GSS_S_COMPLETE: OM_uint32 = 0;
const GSS_S_CONTINUE_NEEDED: OM_uint32 = 1;
/// The calling and routine error fields of a major status (RFC 2744 §3.9.1); the rest is
/// supplementary information such as `GSS_S_CONTINUE_NEEDED`.
const GSS_ERROR_MASK: OM_uint32 = 0xffff_0000;
const GSS_C_INDEFINITE: OM_uint32 = 0xffff_ffff;
const GSS_C_ACCEPT: c_int = 2;
const GSS_C_GSS_CODE: c_int = 1;
const GSS_C_MECH_CODE: c_int = 2;
const GSS_C_QOP_DEFAULT: OM_uint32 = 0;

/// `GSS_KRB5_NT_PRINCIPAL_NAME`, 1.2.840.113554.1.2.2.1: a name as `service/host@REALM`.
const KRB5_PRINCIPAL_NAME: &[u8] = b"\x2a\x86\x48\x86\xf7\x12\x01\x02\x02\x01";

type ImportName = unsafe extern "C" fn(
    minor: *mut OM_uint32,
    input_name_buffer: *mut gss_buffer_desc,
    input_name_type: *mut gss_OID_desc,
    output_name: *mut gss_name_t,
) -> OM_uint32;
type DisplayName = unsafe extern "C" fn(
    minor: *mut OM_uint32,
    input_name: gss_name_t,
    output_name_buffer: *mut gss_buffer_desc,
    output_name_type: *mut *mut gss_OID_desc,
) -> OM_uint32;
type ReleaseName = unsafe extern "C" fn(minor: *mut OM_uint32, name: *mut gss_name_t) -> OM_uint32;
type AcquireCred = unsafe extern "C" fn(
    minor: *mut OM_uint32,
    desired_name: gss_name_t,
    time_req: OM_uint32,
    desired_mechs: gss_opaque_t,
    cred_usage: c_int,
    output_cred_handle: *mut gss_cred_id_t,
    actual_mechs: *mut gss_opaque_t,
    time_rec: *mut OM_uint32,
) -> OM_uint32;
type ReleaseCred =
    unsafe extern "C" fn(minor: *mut OM_uint32, cred_handle: *mut gss_cred_id_t) -> OM_uint32;
type AcceptSecContext = unsafe extern "C" fn(
    minor: *mut OM_uint32,
    context_handle: *mut gss_ctx_id_t,
    acceptor_cred_handle: gss_cred_id_t,
    input_token_buffer: *mut gss_buffer_desc,
    input_chan_bindings: gss_opaque_t,
    src_name: *mut gss_name_t,
    mech_type: *mut *mut gss_OID_desc,
    output_token: *mut gss_buffer_desc,
    ret_flags: *mut OM_uint32,
    time_rec: *mut OM_uint32,
    delegated_cred_handle: *mut gss_cred_id_t,
) -> OM_uint32;
type InquireContext = unsafe extern "C" fn(
    minor: *mut OM_uint32,
    context_handle: gss_ctx_id_t,
    src_name: *mut gss_name_t,
    targ_name: *mut gss_name_t,
    lifetime_rec: *mut OM_uint32,
    mech_type: *mut *mut gss_OID_desc,
    ctx_flags: *mut OM_uint32,
    locally_initiated: *mut c_int,
    open: *mut c_int,
) -> OM_uint32;
type DeleteSecContext = unsafe extern "C" fn(
    minor: *mut OM_uint32,
    context_handle: *mut gss_ctx_id_t,
    output_token: *mut gss_buffer_desc,
) -> OM_uint32;
type Wrap = unsafe extern "C" fn(
    minor: *mut OM_uint32,
    context_handle: gss_ctx_id_t,
    conf_req_flag: c_int,
    qop_req: OM_uint32,
    input_message_buffer: *mut gss_buffer_desc,
    conf_state: *mut c_int,
    output_message_buffer: *mut gss_buffer_desc,
) -> OM_uint32;
type WrapSizeLimit = unsafe extern "C" fn(
    minor: *mut OM_uint32,
    context_handle: gss_ctx_id_t,
    conf_req_flag: c_int,
    qop_req: OM_uint32,
    req_output_size: OM_uint32,
    max_input_size: *mut OM_uint32,
) -> OM_uint32;
type Unwrap = unsafe extern "C" fn(
    minor: *mut OM_uint32,
    context_handle: gss_ctx_id_t,
    input_message_buffer: *mut gss_buffer_desc,
    output_message_buffer: *mut gss_buffer_desc,
    conf_state: *mut c_int,
    qop_state: *mut OM_uint32,
) -> OM_uint32;
type DisplayStatus = unsafe extern "C" fn(
    minor: *mut OM_uint32,
    status_value: OM_uint32,
    status_type: c_int,
    mech_type: *mut gss_OID_desc,
    message_context: *mut OM_uint32,
    status_string: *mut gss_buffer_desc,
) -> OM_uint32;
type ReleaseBuffer =
    unsafe extern "C" fn(minor: *mut OM_uint32, buffer: *mut gss_buffer_desc) -> OM_uint32;

/// The loaded library and the functions taken from it.
pub struct Gssapi {
    import_name: ImportName,
    display_name: DisplayName,
    release_name: ReleaseName,
    acquire_cred: AcquireCred,
    release_cred: ReleaseCred,
    accept_sec_context: AcceptSecContext,
    inquire_context: InquireContext,
    delete_sec_context: DeleteSecContext,
    wrap: Wrap,
    wrap_size_limit: WrapSizeLimit,
    unwrap: Unwrap,
    display_status: DisplayStatus,
    release_buffer: ReleaseBuffer,
    /// Kept open for the functions above (it lives in a static and is never dropped).
    _library: Library,
}

/// MIT krb5's GSS-API, loaded on the first call (from [`LIBRARY_VARIABLE`]'s path if set);
/// the error says what was looked for and how to install it.
pub fn library() -> Result<&'static Gssapi, String> {
    static LOADED: OnceLock<Result<Gssapi, String>> = OnceLock::new();
    LOADED
        .get_or_init(|| load(std::env::var_os(LIBRARY_VARIABLE)))
        .as_ref()
        .map_err(Clone::clone)
}

/// Loads the library at `configured` (the override), or under its usual names.
fn load(configured: Option<OsString>) -> Result<Gssapi, String> {
    let install = format!(
        "install it (Debian and Ubuntu: apt-get install {DEBIAN_PACKAGE}) or set \
         {LIBRARY_VARIABLE} to its path"
    );
    let (candidates, looked_for) = match configured {
        Some(path) => {
            let looked_for = format!("{} (from {LIBRARY_VARIABLE})", path.to_string_lossy());
            (vec![path], looked_for)
        }
        None => (
            LIBRARY_NAMES.iter().map(OsString::from).collect(),
            LIBRARY_NAMES.join(" or "),
        ),
    };
    let mut failures = Vec::new();
    for candidate in &candidates {
        // SAFETY: MIT krb5's library (or the one the operator names for it) only sets
        // itself up when loaded; its initialisers take no part of this process's state.
        match unsafe { Library::new(candidate) } {
            Ok(library) => {
                return Gssapi::resolve(library).map_err(|symbol| {
                    format!(
                        "authentication KERBEROS needs MIT krb5's GSS-API library, and {} is \
                         not it (it has no {symbol}): {install}",
                        candidate.to_string_lossy()
                    )
                })
            }
            // The loader's message names the file.
            Err(e) => failures.push(e.to_string()),
        }
    }
    Err(format!(
        "authentication KERBEROS needs MIT krb5's GSS-API library, and {looked_for} cannot be \
         loaded ({}): {install}",
        failures.join("; ")
    ))
}

impl Gssapi {
    /// Takes every function from `library`, or names the first it lacks.
    fn resolve(library: Library) -> Result<Self, &'static str> {
        macro_rules! function {
            ($name:literal) => {
                // SAFETY: the function pointer type this is read as is the symbol's RFC 2744
                // prototype, as declared above from MIT's gssapi.h; the pointer is used only
                // while `library` (moved into the returned value, which lives for the rest
                // of the process) stays loaded.
                *unsafe { library.get(concat!($name, "\0").as_bytes()) }.map_err(|_| $name)?
            };
        }
        Ok(Self {
            import_name: function!("gss_import_name"),
            display_name: function!("gss_display_name"),
            release_name: function!("gss_release_name"),
            acquire_cred: function!("gss_acquire_cred"),
            release_cred: function!("gss_release_cred"),
            accept_sec_context: function!("gss_accept_sec_context"),
            inquire_context: function!("gss_inquire_context"),
            delete_sec_context: function!("gss_delete_sec_context"),
            wrap: function!("gss_wrap"),
            wrap_size_limit: function!("gss_wrap_size_limit"),
            unwrap: function!("gss_unwrap"),
            display_status: function!("gss_display_status"),
            release_buffer: function!("gss_release_buffer"),
            _library: library,
        })
    }

    /// The text of a failed call's status: the major status' messages, then each of the
    /// mechanism's (minor) in parentheses, e.g. "Unspecified GSS failure.  Minor code may
    /// provide more information (Wrong principal in request)".
    fn status_text(&'static self, major: OM_uint32, minor: OM_uint32) -> String {
        let mut text = String::new();
        self.append_status(&mut text, major, GSS_C_GSS_CODE);
        self.append_status(&mut text, minor, GSS_C_MECH_CODE);
        text
    }

    fn append_status(&'static self, text: &mut String, code: OM_uint32, kind: c_int) {
        let mut message_context: OM_uint32 = 0;
        loop {
            let mut minor = 0;
            let mut message = OutBuffer::new(self);
            // SAFETY: every pointer is to a live local; a null mechanism is GSS_C_NO_OID;
            // the message is the library's to fill and `OutBuffer` releases it.
            let major = unsafe {
                (self.display_status)(
                    &mut minor,
                    code,
                    kind,
                    ptr::null_mut(),
                    &mut message_context,
                    &mut message.desc,
                )
            };
            if major != GSS_S_COMPLETE && major != GSS_S_CONTINUE_NEEDED {
                text.push_str(&format!("unknown GSS-API status code {code}"));
                return;
            }
            let message = String::from_utf8_lossy(message.bytes());
            if kind == GSS_C_MECH_CODE {
                text.push_str(&format!(" ({message})"));
            } else {
                text.push_str(&message);
            }
            if message_context == 0 {
                return;
            }
        }
    }
}

/// An input buffer over bytes the library only reads.
fn input(bytes: &[u8]) -> gss_buffer_desc {
    gss_buffer_desc {
        length: bytes.len(),
        value: bytes.as_ptr().cast_mut().cast(),
    }
}

/// A buffer the library fills and this releases.
struct OutBuffer {
    gss: &'static Gssapi,
    desc: gss_buffer_desc,
}

impl OutBuffer {
    fn new(gss: &'static Gssapi) -> Self {
        Self {
            gss,
            desc: gss_buffer_desc {
                length: 0,
                value: ptr::null_mut(),
            },
        }
    }

    fn bytes(&self) -> &[u8] {
        if self.desc.value.is_null() || self.desc.length == 0 {
            return &[];
        }
        // SAFETY: the library filled `value` with `length` bytes, which stay allocated
        // until this buffer is released in `drop`.
        unsafe { std::slice::from_raw_parts(self.desc.value.cast::<u8>(), self.desc.length) }
    }
}

impl Drop for OutBuffer {
    fn drop(&mut self) {
        if self.desc.value.is_null() {
            return;
        }
        let mut minor = 0;
        // SAFETY: the buffer was filled by this library and is released once, here.
        unsafe { (self.gss.release_buffer)(&mut minor, &mut self.desc) };
    }
}

/// Calls one of the library's functions, given where to put the minor status: `Ok` if it
/// completed, without even supplementary information (e.g. `gss_unwrap`'s
/// GSS_S_DUPLICATE_TOKEN refuses a replayed message), else the status' text.
fn call(
    gss: &'static Gssapi,
    function: impl FnOnce(&mut OM_uint32) -> OM_uint32,
) -> Result<(), String> {
    let mut minor = 0;
    let major = function(&mut minor);
    if major == GSS_S_COMPLETE {
        Ok(())
    } else {
        Err(gss.status_text(major, minor))
    }
}

/// A GSS-API name (`gss_name_t`).
pub struct Name {
    gss: &'static Gssapi,
    handle: gss_name_t,
}

impl Name {
    /// Imports `principal` (`service/host@REALM`) as a Kerberos principal name.
    pub fn krb5_principal(gss: &'static Gssapi, principal: &str) -> Result<Self, String> {
        let mut name_type = gss_OID_desc {
            length: KRB5_PRINCIPAL_NAME.len() as OM_uint32,
            elements: KRB5_PRINCIPAL_NAME.as_ptr().cast_mut().cast(),
        };
        let mut name = Name {
            gss,
            handle: ptr::null_mut(),
        };
        // SAFETY: the library only reads the input buffer and the OID (it copies the OID
        // into the name), both live for the call; it writes the new name into `name`,
        // which releases it.
        call(gss, |minor| unsafe {
            (gss.import_name)(
                minor,
                &mut input(principal.as_bytes()),
                &mut name_type,
                &mut name.handle,
            )
        })?;
        Ok(name)
    }

    /// The name as text, e.g. `alice@EXAMPLE.COM`.
    pub fn display(&self) -> Result<String, String> {
        let mut text = OutBuffer::new(self.gss);
        // SAFETY: `handle` is a live name; the text is the library's to fill and
        // `OutBuffer` releases it; the name type (owned by the name) is not asked for.
        call(self.gss, |minor| unsafe {
            (self.gss.display_name)(minor, self.handle, &mut text.desc, ptr::null_mut())
        })?;
        String::from_utf8(text.bytes().to_vec())
            .map_err(|_| "the principal's name is not UTF-8".to_owned())
    }
}

impl Drop for Name {
    fn drop(&mut self) {
        if self.handle.is_null() {
            return;
        }
        let mut minor = 0;
        // SAFETY: the name was made by this library and is released once, here.
        unsafe { (self.gss.release_name)(&mut minor, &mut self.handle) };
    }
}

/// Acceptor credentials (`gss_cred_id_t`), shared by the contexts that accept with them.
pub struct Credentials {
    gss: &'static Gssapi,
    handle: gss_cred_id_t,
}

// SAFETY: the handle is only read after acquisition; MIT krb5 locks its credentials
// internally, so contexts on several threads may accept with them at once.
unsafe impl Send for Credentials {}
// SAFETY: as for `Send`: shared use is read-only on this side and locked on the library's.
unsafe impl Sync for Credentials {}

impl Credentials {
    /// Credentials to accept tickets for `name`, or for any principal of the default keytab
    /// when `name` is `None`, for as long as the keys last.
    pub fn accept(gss: &'static Gssapi, name: Option<&Name>) -> Result<Self, String> {
        let mut credentials = Credentials {
            gss,
            handle: ptr::null_mut(),
        };
        // SAFETY: the name, if any, is live; null desired mechanisms mean the default set
        // and null outputs are not asked for; the handle written is released by `drop`.
        call(gss, |minor| unsafe {
            (gss.acquire_cred)(
                minor,
                name.map_or(ptr::null_mut(), |name| name.handle),
                GSS_C_INDEFINITE,
                ptr::null_mut(),
                GSS_C_ACCEPT,
                &mut credentials.handle,
                ptr::null_mut(),
                ptr::null_mut(),
            )
        })?;
        Ok(credentials)
    }
}

impl Drop for Credentials {
    fn drop(&mut self) {
        if self.handle.is_null() {
            return;
        }
        let mut minor = 0;
        // SAFETY: the credentials were acquired from this library and are released once,
        // here, when the last context using them is gone (they are shared through `Arc`).
        unsafe { (self.gss.release_cred)(&mut minor, &mut self.handle) };
    }
}

/// How far an acceptor context got.
enum State {
    Accepting,
    Complete,
    /// The status text of the failed step, returned again to any later step.
    Failed(String),
}

/// One client's security context on the acceptor's side (`gss_ctx_id_t`).
pub struct AcceptorContext {
    gss: &'static Gssapi,
    handle: gss_ctx_id_t,
    credentials: Arc<Credentials>,
    state: State,
}

// SAFETY: a context is used by one thread at a time (every call takes `&mut self` or is a
// read-only inquiry through `&self`, and the type is not `Sync`), which is what RFC 2744
// asks; moving it between threads is allowed.
unsafe impl Send for AcceptorContext {}

impl AcceptorContext {
    pub fn new(credentials: Arc<Credentials>) -> Self {
        Self {
            gss: credentials.gss,
            handle: ptr::null_mut(),
            credentials,
            state: State::Accepting,
        }
    }

    /// Feeds the client's next token: a token for the client, if the library made one
    /// (always while it needs more), or `None` once established without one.
    pub fn step(&mut self, token: &[u8]) -> Result<Option<Vec<u8>>, String> {
        match &self.state {
            State::Accepting => {}
            State::Complete => return Ok(None),
            State::Failed(text) => return Err(text.clone()),
        }
        let mut reply = OutBuffer::new(self.gss);
        let mut minor = 0;
        // SAFETY: `handle` is null or this context's; the credentials are live (held by
        // `self`); the input token is only read; null channel bindings, source name,
        // mechanism, flags, lifetime and delegated credentials are not asked for; the reply
        // is the library's to fill and `OutBuffer` releases it.
        let major = unsafe {
            (self.gss.accept_sec_context)(
                &mut minor,
                &mut self.handle,
                self.credentials.handle,
                &mut input(token),
                ptr::null_mut(),
                ptr::null_mut(),
                ptr::null_mut(),
                &mut reply.desc,
                ptr::null_mut(),
                ptr::null_mut(),
                ptr::null_mut(),
            )
        };
        if major & GSS_ERROR_MASK != 0 {
            let text = self.gss.status_text(major, minor);
            self.state = State::Failed(text.clone());
            return Err(text);
        }
        let reply = reply.bytes().to_vec();
        if major & GSS_S_CONTINUE_NEEDED != 0 {
            Ok(Some(reply))
        } else {
            self.state = State::Complete;
            Ok((!reply.is_empty()).then_some(reply))
        }
    }

    pub fn is_complete(&self) -> bool {
        matches!(self.state, State::Complete)
    }

    /// The client's principal.
    pub fn source_name(&self) -> Result<Name, String> {
        self.inquire_name(true)
    }

    /// The principal the client's ticket is for.
    pub fn target_name(&self) -> Result<Name, String> {
        self.inquire_name(false)
    }

    fn inquire_name(&self, source: bool) -> Result<Name, String> {
        let mut name = Name {
            gss: self.gss,
            handle: ptr::null_mut(),
        };
        let (source_name, target_name) = if source {
            (ptr::addr_of_mut!(name.handle), ptr::null_mut())
        } else {
            (ptr::null_mut(), ptr::addr_of_mut!(name.handle))
        };
        // SAFETY: `handle` is null or this context's (the library refuses a null one with
        // GSS_S_NO_CONTEXT); only the one name is asked for, written into `name`, which
        // releases it even if the call fails after making it.
        call(self.gss, |minor| unsafe {
            (self.gss.inquire_context)(
                minor,
                self.handle,
                source_name,
                target_name,
                ptr::null_mut(),
                ptr::null_mut(),
                ptr::null_mut(),
                ptr::null_mut(),
                ptr::null_mut(),
            )
        })?;
        Ok(name)
    }

    /// Protects `message` for integrity, and encrypts it too when `confidential`, with the
    /// default QOP. Asked for confidentiality, a context that cannot give it is an error
    /// rather than a token in clear.
    pub fn wrap(&mut self, message: &[u8], confidential: bool) -> Result<Vec<u8>, String> {
        let mut wrapped = OutBuffer::new(self.gss);
        let mut conf_state: c_int = 0;
        // SAFETY: `handle` is null or this context's; the message is only read; the output
        // is the library's to fill and `OutBuffer` releases it; conf_state is a live local.
        call(self.gss, |minor| unsafe {
            (self.gss.wrap)(
                minor,
                self.handle,
                c_int::from(confidential),
                GSS_C_QOP_DEFAULT,
                &mut input(message),
                &mut conf_state,
                &mut wrapped.desc,
            )
        })?;
        if confidential && conf_state == 0 {
            return Err("the security context cannot encrypt (no confidentiality)".into());
        }
        Ok(wrapped.bytes().to_vec())
    }

    /// The largest message whose wrapped token is at most `max_token` bytes.
    pub fn wrap_size_limit(&self, confidential: bool, max_token: u32) -> Result<u32, String> {
        let mut max_input: OM_uint32 = 0;
        // SAFETY: `handle` is null or this context's; max_input is a live local.
        call(self.gss, |minor| unsafe {
            (self.gss.wrap_size_limit)(
                minor,
                self.handle,
                c_int::from(confidential),
                GSS_C_QOP_DEFAULT,
                max_token,
                &mut max_input,
            )
        })?;
        Ok(max_input)
    }

    /// Checks and unprotects a message the client wrapped: the message, and whether it was
    /// encrypted.
    pub fn unwrap(&mut self, token: &[u8]) -> Result<(Vec<u8>, bool), String> {
        let mut message = OutBuffer::new(self.gss);
        let mut conf_state: c_int = 0;
        // SAFETY: as for `wrap`; conf_state is a live local, qop_state is not asked for.
        call(self.gss, |minor| unsafe {
            (self.gss.unwrap)(
                minor,
                self.handle,
                &mut input(token),
                &mut message.desc,
                &mut conf_state,
                ptr::null_mut(),
            )
        })?;
        Ok((message.bytes().to_vec(), conf_state != 0))
    }
}

impl Drop for AcceptorContext {
    fn drop(&mut self) {
        if self.handle.is_null() {
            return;
        }
        let mut minor = 0;
        // SAFETY: the context was made by this library and is deleted once, here; no
        // output token is asked for.
        unsafe { (self.gss.delete_sec_context)(&mut minor, &mut self.handle, ptr::null_mut()) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // A missing library: kerberos.rs's tests, through the override, as the gateway starts.

    #[test]
    fn a_library_without_gss_api_is_refused() {
        // The C library is loaded in every process and has none of GSS-API's functions.
        let err = load(Some("libc.so.6".into())).err().unwrap();
        assert!(
            err.contains("and libc.so.6 is not it (it has no gss_import_name)"),
            "{err}"
        );
    }

    #[test]
    fn status_codes_read_as_the_library_words_them() {
        // The tests' hosts have MIT krb5 (scripts/setup.sh installs it). Not `library()`:
        // the process' copy is kerberos.rs's test's, which loads it from elsewhere.
        let gss: &'static Gssapi = Box::leak(Box::new(load(None).unwrap()));
        let text = gss.status_text(0x000d_0000, 0);
        assert!(text.starts_with("Unspecified GSS failure"), "{text}");
    }
}
