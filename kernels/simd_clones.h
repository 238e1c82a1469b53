// EMBER_SIMD_CLONES before a function definition: GCC builds it for AVX-512 (x86-64-v4), AVX2+FMA
// (x86-64-v3) and baseline x86-64, and picks the best the CPU has at load time (ifunc). Clones
// need GCC >= 12 (arch=x86-64-vN) and ifunc (glibc on Linux); elsewhere one portable build.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12 && defined(__linux__) && \
    defined(__GLIBC__)
#define EMBER_SIMD_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define EMBER_SIMD_CLONES
#endif
#if defined(__GNUC__) && !defined(__clang__)
#define EMBER_IVDEP _Pragma("GCC ivdep")
#else
#define EMBER_IVDEP
#endif
