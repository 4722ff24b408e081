#!/usr/bin/env bash
# Sourced by the build and test scripts: turns on the llama.cpp CPU paths this machine has.
#
# llama-cpp-sys-2 builds llama.cpp for the Rust target's features (x86-64 baseline plus what
# cargo reports), which leaves out AVX-512 even where the CPU has it. The runner is always
# built from source on the machine that runs it, so reading /proc/cpuinfo here is safe: the
# `GGML_*` variables reach llama.cpp's cmake. Each is always set, ON or OFF, because the build
# script asks cargo to watch only the GGML_ variables it saw: so a cached build made on another
# CPU (or before this script) is rebuilt rather than reused.
# Measured on an AMD EPYC with AVX-512: the 1.5B model's prompt speed doubles.
# Set PLUMB_LLM_PORTABLE=1 to build for the baseline only.

export GGML_AVX512=OFF GGML_AVX512_VBMI=OFF GGML_AVX512_VNNI=OFF GGML_AVX512_BF16=OFF
if [[ "${PLUMB_LLM_PORTABLE:-0}" != 1 && -r /proc/cpuinfo ]]; then
    plumb_cpu_flags=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2 || true) "
    plumb_has() { [[ "$plumb_cpu_flags" == *" $1 "* ]]; }
    # GGML_AVX512 compiles with -mavx512f -mavx512cd -mavx512vl -mavx512dq -mavx512bw.
    if plumb_has avx512f && plumb_has avx512cd && plumb_has avx512vl && plumb_has avx512dq && plumb_has avx512bw; then
        export GGML_AVX512=ON
        if plumb_has avx512vbmi; then export GGML_AVX512_VBMI=ON; fi
        if plumb_has avx512_vnni; then export GGML_AVX512_VNNI=ON; fi
        if plumb_has avx512_bf16; then export GGML_AVX512_BF16=ON; fi
    fi
    unset -f plumb_has
    unset plumb_cpu_flags
fi
