// Debian's OpenSSL 3 libcrypto (package libssl-dev): RSA keys and RS256, P-256 keys and ES256 (identity
// providers' tokens), scrypt, AES-256-CTR.
// Imported only by HearthCrypto.
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/param_build.h>
#include <openssl/ec.h>

// EVP_RSA_gen is a macro over the variadic EVP_PKEY_Q_keygen, neither of which imports into Swift.
static inline EVP_PKEY *COpenSSL_rsa_generate(unsigned int bits) { return EVP_RSA_gen(bits); }

// BIO_get_mem_data is a macro over BIO_ctrl.
static inline long COpenSSL_bio_mem_data(BIO *bio, char **data) { return BIO_get_mem_data(bio, data); }

// EVP_PKEY_PUBLIC_KEY is a macro over other selection macros.
static inline int COpenSSL_public_key_selection(void) { return EVP_PKEY_PUBLIC_KEY; }

// EVP_EC_gen is a macro over the variadic EVP_PKEY_Q_keygen.
static inline EVP_PKEY *COpenSSL_ec_generate(const char *curve) { return EVP_EC_gen(curve); }
