//! Every expected value is pyspark 4.3's (local, `spark.sql.ansi.enabled=false`).

use crate::hive_functions::tests::check;
use crate::test_util::{engine, open, refusals};

#[tokio::test]
async fn aes_encrypt_lays_its_bytes_out_as_spark_with_a_given_iv() {
    let engine = engine().await;
    let s = open(&engine);
    check(
        &engine,
        &s,
        "SELECT base64(aes_encrypt('ABC', '1234567890123456', 'ECB')), \
         hex(aes_encrypt('Spark SQL', '0000111122223333', 'GCM', 'DEFAULT', \
             unhex('000000000000000000000000'))), \
         hex(aes_encrypt('Spark SQL', '0000111122223333', 'CBC', 'DEFAULT', \
             unhex('00000000000000000000000000000000'))), \
         hex(aes_encrypt('Spark', 'abcdefghijklmnop12345678ABCDEFGH', 'GCM', 'DEFAULT', \
             unhex('000000000000000000000000'), 'This is an AAD mixed into the input'))",
        &[
            // Hive's own example, whose only mode is ECB.
            "y6Ss+zCYObpCbgfWfyNWTw==",
            "00000000000000000000000046C4EF1C6A606751A7FF76387095269BF2767D2037510C8946",
            "00000000000000000000000000000000B00F6FF4BF69F8A482DDF536CDFB0449",
            "000000000000000000000000422622FAC4CB9BB283F54719DA79517580DEFCF5F8",
        ],
    )
    .await;
}

#[tokio::test]
async fn what_aes_encrypt_encrypts_aes_decrypt_decrypts_in_every_mode_and_key_length() {
    let engine = engine().await;
    let s = open(&engine);
    // A random IV: the same text encrypts differently each time, and decrypts the same.
    check(
        &engine,
        &s,
        "SELECT cast(aes_decrypt(aes_encrypt('hi', '1234567890123456'), '1234567890123456') \
             AS STRING), \
         length(aes_encrypt('hi', '1234567890123456')), \
         length(aes_encrypt('hi', '1234567890123456', 'CBC')), \
         aes_encrypt('hi', '1234567890123456') = aes_encrypt('hi', '1234567890123456'), \
         aes_encrypt(NULL, '1234567890123456'), aes_encrypt('x', NULL), \
         aes_encrypt('x', '1234567890123456', NULL), \
         typeof(aes_decrypt(aes_encrypt('x', '1234567890123456'), '1234567890123456')), \
         hex(aes_decrypt(aes_encrypt('', '1234567890123456', 'ecb', 'pkcs'), \
             '1234567890123456', 'Ecb'))",
        &[
            "hi", "30", "32", "false", "NULL", "NULL", "NULL", "binary", "",
        ],
    )
    .await;
    for key in [
        "0123456789abcdef",
        "0123456789abcdef01234567",
        "0123456789abcdef0123456789abcdef",
    ] {
        for mode in ["GCM", "CBC", "ECB"] {
            check(
                &engine,
                &s,
                &format!(
                    "SELECT cast(aes_decrypt(aes_encrypt(s, '{key}', '{mode}'), '{key}', \
                     '{mode}') AS STRING) FROM VALUES ('Kumiho, 구미호 🦊') AS t(s)"
                ),
                &["Kumiho, 구미호 🦊"],
            )
            .await;
        }
    }
    check(
        &engine,
        &s,
        "SELECT cast(aes_decrypt(aes_encrypt('x', k, 'GCM', 'DEFAULT', '', 'the aad'), k, \
         'GCM', 'DEFAULT', 'the aad') AS STRING) FROM VALUES ('abcdefghijklmnop') AS t(k)",
        &["x"],
    )
    .await;
}

#[tokio::test]
async fn a_wrong_key_mode_or_iv_fails_aes_and_try_aes_decrypt_gives_null() {
    let engine = engine().await;
    let s = open(&engine);
    refusals(
        &engine,
        &s,
        &[
            (
                "SELECT aes_encrypt('a', 'short')",
                "the key must be 16, 24 or 32 bytes (AES-128, -192 or -256), not 5",
            ),
            (
                "SELECT aes_encrypt('a', '1234567890123456', 'ECB', 'NONE')",
                "AES-ECB with the padding NONE is not supported",
            ),
            (
                "SELECT aes_encrypt('a', '1234567890123456', 'XTS')",
                "AES-XTS with the padding DEFAULT is not supported",
            ),
            (
                "SELECT aes_encrypt('a', '1234567890123456', 'ECB', 'DEFAULT', unhex('00'))",
                "ECB mode takes no IV",
            ),
            (
                "SELECT aes_encrypt('a', '1234567890123456', 'GCM', 'DEFAULT', unhex('00'))",
                "the IV of GCM mode must be 12 bytes, not 1",
            ),
            (
                "SELECT aes_encrypt('a', '1234567890123456', 'CBC', 'DEFAULT', '', 'aad')",
                "additional authenticated data is for GCM mode alone",
            ),
            (
                "SELECT aes_decrypt(unhex('00'), '1234567890123456')",
                "aes_decrypt: the input cannot be decrypted in GCM mode with this key",
            ),
            (
                "SELECT aes_decrypt(aes_encrypt('a', '1234567890123456'), '6543210987654321')",
                "aes_decrypt: the input cannot be decrypted",
            ),
            (
                "SELECT aes_encrypt(1, '1234567890123456')",
                "aes_encrypt takes (input, key",
            ),
        ],
    )
    .await;
    check(
        &engine,
        &s,
        "SELECT try_aes_decrypt(unhex('00'), '1234567890123456'), \
         try_aes_decrypt(unhex('00'), 'short'), \
         try_aes_decrypt(aes_encrypt('a', '1234567890123456', 'CBC', 'DEFAULT', \
             unhex('00000000000000000000000000000000')), '6543210987654321', 'CBC'), \
         cast(try_aes_decrypt(aes_encrypt('a', '1234567890123456'), '1234567890123456') \
             AS STRING)",
        &["NULL", "NULL", "NULL", "a"],
    )
    .await;
}
