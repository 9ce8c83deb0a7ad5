//! Spark's `aes_encrypt`, `aes_decrypt` and `try_aes_decrypt`: AES with a 16, 24 or 32 byte
//! key in GCM (the default), CBC or ECB mode, laid out as Spark lays its bytes out, so that
//! what one encrypts the other decrypts.
//!
//! Spark's layout, which is Java's `Cipher` output with the IV in front:
//! - GCM: a 12-byte IV, the ciphertext, a 16-byte tag; no padding; additional authenticated
//!   data (`aad`) allowed.
//! - CBC: a 16-byte IV, then the ciphertext padded as PKCS #5 (#7) pads it.
//! - ECB: the ciphertext alone, padded alike (Hive's `aes_encrypt`, whose only mode it is).
//!
//! An IV not given is drawn at random for each value, so `aes_encrypt` in GCM or CBC mode
//! is volatile, as the same text encrypted twice must not read alike.

use aes::cipher::block_padding::Pkcs7;
use aes::cipher::consts::{U12, U16};
use aes::cipher::{
    BlockCipher, BlockDecrypt, BlockDecryptMut, BlockEncrypt, BlockEncryptMut, KeyInit, KeyIvInit,
};
use aes::{Aes128, Aes192, Aes256};
use aes_gcm::aead::{Aead, Payload};
use aes_gcm::AesGcm;
use datafusion::arrow::array::{Array, ArrayRef, BinaryBuilder};
use datafusion::arrow::datatypes::DataType;
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::{ScalarUDF, Signature, Volatility};
use rand::RngCore;
use std::sync::Arc;

use super::encoding::bytes_of;
use super::{bad_arguments, is_string, HiveFunction};

pub fn functions() -> Vec<ScalarUDF> {
    vec![
        HiveFunction::computed("aes_encrypt", encrypt_types, binary, encrypt)
            .with_signature(Signature::user_defined(Volatility::Volatile))
            .udf(),
        HiveFunction::computed("aes_decrypt", decrypt_types, binary, |a| decrypt(a, true)).udf(),
        HiveFunction::computed("try_aes_decrypt", decrypt_types, binary, |a| {
            decrypt(a, false)
        })
        .udf(),
    ]
}

fn binary(_: &[DataType]) -> Result<DataType> {
    Ok(DataType::Binary)
}

/// The argument types, in order, of `aes_encrypt(input, key, mode, padding, iv, aad)`: each
/// a binary (a string's UTF-8 bytes) but the mode and padding, which are names.
const ENCRYPT_ARGUMENTS: [DataType; 6] = [
    DataType::Binary,
    DataType::Binary,
    DataType::Utf8,
    DataType::Utf8,
    DataType::Binary,
    DataType::Binary,
];

fn encrypt_types(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    arguments(
        name,
        types,
        &ENCRYPT_ARGUMENTS,
        "(input, key[, mode[, padding[, iv[, aad]]]])",
    )
}

/// `aes_decrypt(input, key, mode, padding, aad)`: as `aes_encrypt`'s without the IV, which
/// the input carries.
fn decrypt_types(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    let [input, key, mode, padding, _iv, aad] = ENCRYPT_ARGUMENTS;
    arguments(
        name,
        types,
        &[input, key, mode, padding, aad],
        "(input, key[, mode[, padding[, aad]]])",
    )
}

fn arguments(
    name: &str,
    types: &[DataType],
    wanted: &[DataType],
    takes: &str,
) -> Result<Vec<DataType>> {
    let fits = |given: &DataType, wanted: &DataType| {
        given.is_null()
            || is_string(given)
            || (*wanted == DataType::Binary
                && matches!(
                    given,
                    DataType::Binary | DataType::LargeBinary | DataType::BinaryView
                ))
    };
    if types.len() < 2
        || types.len() > wanted.len()
        || !types.iter().zip(wanted).all(|(g, w)| fits(g, w))
    {
        return Err(bad_arguments(name, takes, types));
    }
    Ok(wanted[..types.len()].to_vec())
}

/// A mode and its padding, as Spark allows them together.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Mode {
    Gcm,
    Cbc,
    Ecb,
}

impl Mode {
    /// Spark's names (any case): `GCM` with padding `NONE`, `CBC` or `ECB` with `PKCS`;
    /// `DEFAULT` is the mode's own padding.
    fn named(function: &str, mode: &str, padding: &str) -> Result<Mode> {
        let mode_name = mode.to_ascii_uppercase();
        let padding_name = padding.to_ascii_uppercase();
        let found = match mode_name.as_str() {
            "GCM" => Some(Mode::Gcm),
            "CBC" => Some(Mode::Cbc),
            "ECB" => Some(Mode::Ecb),
            _ => None,
        };
        let padded = match (found, padding_name.as_str()) {
            (Some(mode), "DEFAULT") => Some(mode),
            (Some(Mode::Gcm), "NONE") => Some(Mode::Gcm),
            (Some(mode @ (Mode::Cbc | Mode::Ecb)), "PKCS") => Some(mode),
            _ => None,
        };
        padded.ok_or_else(|| {
            DataFusionError::Execution(format!(
                "{function}: AES-{mode} with the padding {padding} is not supported; \
                 the modes are GCM (padding NONE), CBC and ECB (padding PKCS), or DEFAULT padding"
            ))
        })
    }

    fn name(self) -> &'static str {
        match self {
            Mode::Gcm => "GCM",
            Mode::Cbc => "CBC",
            Mode::Ecb => "ECB",
        }
    }

    fn iv_length(self) -> usize {
        match self {
            Mode::Gcm => 12,
            Mode::Cbc => 16,
            Mode::Ecb => 0,
        }
    }
}

/// A user's mistake in one value's arguments: the message names the function.
fn refused(function: &str, what: impl std::fmt::Display) -> DataFusionError {
    DataFusionError::Execution(format!("{function}: {what}"))
}

fn check_key(function: &str, key: &[u8]) -> Result<()> {
    match key.len() {
        16 | 24 | 32 => Ok(()),
        n => Err(refused(
            function,
            format!("the key must be 16, 24 or 32 bytes (AES-128, -192 or -256), not {n}"),
        )),
    }
}

/// Each row's value of an optional argument: `default` where the call left it out.
fn optional<'a>(
    args: &'a [ArrayRef],
    at: usize,
    rows: usize,
    default: &'a [u8],
) -> Result<Vec<Option<&'a [u8]>>> {
    match args.get(at) {
        Some(values) => bytes_of(values),
        None => Ok(vec![Some(default); rows]),
    }
}

fn texts(bytes: Vec<Option<&[u8]>>) -> Vec<Option<&str>> {
    // Mode and padding are Utf8 after coercion, so their bytes are UTF-8.
    bytes
        .into_iter()
        .map(|b| b.map(|b| std::str::from_utf8(b).unwrap_or("")))
        .collect()
}

/// `aes_encrypt(input, key[, mode[, padding[, iv[, aad]]]])`.
fn encrypt(args: &[ArrayRef]) -> Result<ArrayRef> {
    const NAME: &str = "aes_encrypt";
    let rows = args[0].len();
    let inputs = bytes_of(&args[0])?;
    let keys = bytes_of(&args[1])?;
    let modes = texts(optional(args, 2, rows, b"GCM")?);
    let paddings = texts(optional(args, 3, rows, b"DEFAULT")?);
    let ivs = optional(args, 4, rows, b"")?;
    let aads = optional(args, 5, rows, b"")?;
    let mut out = BinaryBuilder::new();
    for row in 0..rows {
        let (Some(input), Some(key), Some(mode), Some(padding), Some(iv), Some(aad)) = (
            inputs[row],
            keys[row],
            modes[row],
            paddings[row],
            ivs[row],
            aads[row],
        ) else {
            out.append_null();
            continue;
        };
        let mode = Mode::named(NAME, mode, padding)?;
        check_key(NAME, key)?;
        if mode == Mode::Ecb && !iv.is_empty() {
            return Err(refused(NAME, "ECB mode takes no IV"));
        }
        if mode != Mode::Gcm && !aad.is_empty() {
            return Err(refused(
                NAME,
                "additional authenticated data is for GCM mode alone",
            ));
        }
        let iv = if iv.is_empty() {
            let mut drawn = vec![0; mode.iv_length()];
            rand::rng().fill_bytes(&mut drawn);
            drawn
        } else if iv.len() == mode.iv_length() {
            iv.to_vec()
        } else {
            return Err(refused(
                NAME,
                format!(
                    "the IV of {} mode must be {} bytes, not {}",
                    mode.name(),
                    mode.iv_length(),
                    iv.len()
                ),
            ));
        };
        let sealed = match key.len() {
            16 => seal::<Aes128>(mode, key, &iv, aad, input),
            24 => seal::<Aes192>(mode, key, &iv, aad, input),
            _ => seal::<Aes256>(mode, key, &iv, aad, input),
        };
        out.append_value(sealed);
    }
    Ok(Arc::new(out.finish()))
}

/// `aes_decrypt(input, key[, mode[, padding[, aad]]])`; `try_aes_decrypt` (`!fails`) gives
/// NULL where `aes_decrypt` fails for the value (a wrong key, a changed input, ...).
fn decrypt(args: &[ArrayRef], fails: bool) -> Result<ArrayRef> {
    let name = if fails {
        "aes_decrypt"
    } else {
        "try_aes_decrypt"
    };
    let rows = args[0].len();
    let inputs = bytes_of(&args[0])?;
    let keys = bytes_of(&args[1])?;
    let modes = texts(optional(args, 2, rows, b"GCM")?);
    let paddings = texts(optional(args, 3, rows, b"DEFAULT")?);
    let aads = optional(args, 4, rows, b"")?;
    let mut out = BinaryBuilder::new();
    for row in 0..rows {
        let (Some(input), Some(key), Some(mode), Some(padding), Some(aad)) =
            (inputs[row], keys[row], modes[row], paddings[row], aads[row])
        else {
            out.append_null();
            continue;
        };
        let opened = Mode::named(name, mode, padding).and_then(|mode| {
            check_key(name, key)?;
            if mode != Mode::Gcm && !aad.is_empty() {
                return Err(refused(
                    name,
                    "additional authenticated data is for GCM mode alone",
                ));
            }
            let opened = match key.len() {
                16 => open::<Aes128>(mode, key, aad, input),
                24 => open::<Aes192>(mode, key, aad, input),
                _ => open::<Aes256>(mode, key, aad, input),
            };
            opened.ok_or_else(|| {
                refused(
                    name,
                    format!(
                        "the input cannot be decrypted in {} mode with this key: \
                         a wrong key, mode or AAD, or an input that was not encrypted so \
                         (try_aes_decrypt gives NULL for it)",
                        mode.name()
                    ),
                )
            })
        });
        match opened {
            Ok(plain) => out.append_value(plain),
            Err(_) if !fails => out.append_null(),
            Err(error) => return Err(error),
        }
    }
    Ok(Arc::new(out.finish()))
}

/// What the AES variants have in common, for [`seal`] and [`open`].
trait Aes: BlockCipher<BlockSize = U16> + BlockEncrypt + BlockDecrypt + KeyInit + Clone {}
impl<C: BlockCipher<BlockSize = U16> + BlockEncrypt + BlockDecrypt + KeyInit + Clone> Aes for C {}

/// `input` encrypted in `mode` under `key` (its length checked), laid out as Spark's.
fn seal<C: Aes>(mode: Mode, key: &[u8], iv: &[u8], aad: &[u8], input: &[u8]) -> Vec<u8> {
    // The key's and IV's lengths were checked, so no `new_from_slice` below can fail.
    let mut sealed = iv.to_vec();
    match mode {
        Mode::Gcm => {
            let cipher = AesGcm::<C, U12>::new_from_slice(key).expect("checked key length");
            let payload = Payload { msg: input, aad };
            let encrypted = cipher
                .encrypt(iv.into(), payload)
                .expect("GCM encrypts any input shorter than 64 GiB");
            sealed.extend_from_slice(&encrypted);
        }
        Mode::Cbc => {
            let cipher = cbc::Encryptor::<C>::new_from_slices(key, iv).expect("checked lengths");
            sealed.extend_from_slice(&cipher.encrypt_padded_vec_mut::<Pkcs7>(input));
        }
        Mode::Ecb => {
            let cipher = ecb::Encryptor::<C>::new_from_slice(key).expect("checked key length");
            sealed.extend_from_slice(&cipher.encrypt_padded_vec_mut::<Pkcs7>(input));
        }
    }
    sealed
}

/// The plain bytes of `sealed` (laid out as [`seal`] lays them), or `None` when they are
/// not what `mode` and `key` sealed: too short, a wrong padding, or (GCM) a tag that does
/// not match.
fn open<C: Aes>(mode: Mode, key: &[u8], aad: &[u8], sealed: &[u8]) -> Option<Vec<u8>> {
    if sealed.len() < mode.iv_length() {
        return None;
    }
    let (iv, encrypted) = sealed.split_at(mode.iv_length());
    match mode {
        Mode::Gcm => {
            let cipher = AesGcm::<C, U12>::new_from_slice(key).ok()?;
            let payload = Payload {
                msg: encrypted,
                aad,
            };
            cipher.decrypt(iv.into(), payload).ok()
        }
        Mode::Cbc => cbc::Decryptor::<C>::new_from_slices(key, iv)
            .ok()?
            .decrypt_padded_vec_mut::<Pkcs7>(encrypted)
            .ok(),
        Mode::Ecb => ecb::Decryptor::<C>::new_from_slice(key)
            .ok()?
            .decrypt_padded_vec_mut::<Pkcs7>(encrypted)
            .ok(),
    }
}

#[cfg(test)]
mod tests;
