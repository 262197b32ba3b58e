// Owning pointers to OpenSSL objects (and other C handles), each freed with its library's own
// free function: the one set of handle types the farm's certificate code shares.
#pragma once

#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include <memory>

namespace kiln::farm {

// Deletes with `Free`, a C function taking the pointer (X509_free, freeaddrinfo, ...).
template <auto Free>
struct FreeWith {
  template <typename T>
  void operator()(T* p) const {
    Free(p);
  }
};

using Pkey = std::unique_ptr<EVP_PKEY, FreeWith<EVP_PKEY_free>>;
using Cert = std::unique_ptr<X509, FreeWith<X509_free>>;
using CertStore = std::unique_ptr<X509_STORE, FreeWith<X509_STORE_free>>;
using CertStoreCtx = std::unique_ptr<X509_STORE_CTX, FreeWith<X509_STORE_CTX_free>>;
using SslCtx = std::unique_ptr<SSL_CTX, FreeWith<SSL_CTX_free>>;
using Ssl = std::unique_ptr<SSL, FreeWith<SSL_free>>;

}  // namespace kiln::farm
