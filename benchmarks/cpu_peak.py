#!/usr/bin/python3
"""This machine's arithmetic peak per core, for the share-of-peak columns of model_bench.py, and the
instruction set ONNX Runtime's MLAS picks on it.

    /usr/bin/python3 benchmarks/cpu_peak.py [--probe build/benchmarks/ephost_cpu_clock] [--ghz F]
        [--fma-per-cycle N]

Peak per core = frequency x f32 FMAs per cycle x 2 FLOPs. The FMAs per cycle come from the vector
units of the core, looked up from /proc/cpuinfo (vendor, family, model, flags):
  - AMD Zen 1 (family 0x17, models below 0x30): two 128-bit FMA pipes, 8 f32 FMAs per cycle;
  - AMD Zen 2, Zen 3, Zen 4 (family 0x17 from model 0x30, family 0x19): two 256-bit FMA pipes, 16
    (Zen 4 runs AVX-512 on them in two halves: AVX-512 does not raise its peak);
  - AMD Zen 5 (family 0x1a): two 512-bit FMA pipes, 32;
  - Intel with AVX-512 on a Xeon: two 512-bit FMA units (ports 0+1 fused and port 5), 32; other Intel
    with AVX-512 (client cores): one, 16;
  - Intel with AVX2 and FMA: two 256-bit FMA units, 16; without FMA: 8 (mul + add on two ports).
This is the argument of issue 27: a runtime that reaches the FMA peak cannot be beaten in f32.
int8 peak: u8 x s8 products per cycle; with AVX-512 VNNI or AVX-VNNI, vpdpbusd does 4 per 32-bit lane
in one instruction, 4x the f32 FMA rate; without VNNI, vpmaddubsw + vpmaddwd + vpaddd take three
instructions for 4 products per lane, about 2x (ONNX Runtime's AVX2 path).
Measured, where the probe is built (ephost_cpu_clock, benchmarks/cpu_clock.cpp): the clock a core
really runs at (a chain of dependent adds, one per cycle, over the thread's CPU time) and the FMAs
per cycle it sustains with AVX2 and AVX-512 (twelve independent FMA chains), and the u8*s8 products
per cycle of AVX-512 VNNI's vpdpbusd where the CPU has it; the measured values are used, and the table's value is printed beside them as a check. Without the probe: cpufreq's
cpuinfo_max_freq where the kernel has cpufreq (the highest boost the core reports), else
/proc/cpuinfo's "cpu MHz" (in a VM without cpufreq that is the nominal, TSC frequency: a core that
boosts above it then shows a share above 100%). --ghz and --fma-per-cycle override either.
"""
import argparse
import json
import os
import subprocess


def cpuinfo():
    info, flags = {}, set()
    with open('/proc/cpuinfo') as f:
        for line in f:
            if ':' not in line:
                if info:
                    break  # the first processor is enough
                continue
            k, v = (s.strip() for s in line.split(':', 1))
            if k == 'flags':
                flags = set(v.split())
            info.setdefault(k, v)
    return info, flags


def fma_per_cycle(info, flags):
    """(f32 FMAs per cycle per core, why)."""
    vendor = info.get('vendor_id', '')
    family = int(info.get('cpu family', '0'))
    model = int(info.get('model', '0'))
    name = info.get('model name', '')
    if 'fma' not in flags:
        return 8, 'no FMA: a multiply and an add port, 8 f32 lanes'
    if vendor == 'AuthenticAMD':
        if family == 0x17 and model < 0x30:
            return 8, 'AMD Zen 1: two 128-bit FMA pipes'
        if family in (0x17, 0x19):
            return 16, 'AMD Zen 2/3/4: two 256-bit FMA pipes (Zen 4 runs AVX-512 in two halves)'
        if family >= 0x1a:
            return 32, 'AMD Zen 5: two 512-bit FMA pipes'
    if 'avx512f' in flags:
        if 'Xeon' in name:
            return 32, 'Intel Xeon with AVX-512: two 512-bit FMA units'
        return 16, 'Intel client core with AVX-512: one 512-bit FMA unit'
    return 16, 'AVX2 and FMA: two 256-bit FMA units'


def int8_factor(flags):
    """(u8*s8 products per cycle over f32 FMAs per cycle, why)."""
    if 'avx512_vnni' in flags or 'avx_vnni' in flags:
        return 4, 'VNNI (vpdpbusd: 4 u8*s8 products per 32-bit lane per instruction)'
    return 2, 'no VNNI (vpmaddubsw + vpmaddwd + vpaddd: 4 products per lane in 3 instructions)'


def frequency_ghz(info):
    """(GHz, where it came from)."""
    path = '/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq'
    try:
        with open(path) as f:
            return int(f.read().strip()) / 1e6, 'cpufreq cpuinfo_max_freq'
    except OSError:
        pass
    return float(info.get('cpu MHz', '0')) / 1e3, "/proc/cpuinfo 'cpu MHz' (no cpufreq: nominal frequency)"


def mlas_isa(flags):
    """The kernels ONNX Runtime's MLAS picks (onnxruntime/core/mlas/lib/platform.cpp reads CPUID the
    same way): f32 GEMM and u8s8 GEMM. Inferred from the flags; ORT does not print it."""
    if 'avx512f' in flags and 'avx512bw' in flags and 'avx512dq' in flags and 'avx512vl' in flags:
        f32 = 'avx512f'
    elif 'avx2' in flags and 'fma' in flags:
        f32 = 'avx2+fma'
    else:
        f32 = 'sse'
    if f32 == 'avx512f' and 'avx512_vnni' in flags:
        i8 = 'avx512vnni'
    elif 'avx_vnni' in flags:
        i8 = 'avxvnni'
    elif f32 == 'avx512f':
        i8 = 'avx512bw (vpmaddubsw)'
    elif 'avx2' in flags:
        i8 = 'avx2 (vpmaddubsw)'
    else:
        i8 = 'sse'
    return f'f32 {f32}, int8 {i8}'


def probe_machine(probe):
    """ephost_cpu_clock's JSON line, or None where it is not built or fails."""
    if not probe or not os.access(probe, os.X_OK):
        return None
    try:
        return json.loads(subprocess.run([probe], check=True, stdout=subprocess.PIPE, text=True, timeout=120).stdout)
    except (subprocess.SubprocessError, ValueError):
        return None


def machine_peak(ghz=None, fma=None, probe=None):
    info, flags = cpuinfo()
    fma_n, fma_why = fma_per_cycle(info, flags)
    f, f_why = frequency_ghz(info)
    measured = probe_machine(probe)
    if measured:
        f, f_why = measured['ghz'], 'measured by ephost_cpu_clock (dependent adds)'
        best = max(v for v in (measured.get('fma_per_cycle_avx2'), measured.get('fma_per_cycle_avx512'), 0) if v)
        if best:
            fma_n, fma_why = round(best), (f'measured by ephost_cpu_clock: AVX2 {measured.get("fma_per_cycle_avx2")}, '
                                           f'AVX-512 {measured.get("fma_per_cycle_avx512")}; table: {fma_n}, {fma_why}')
    if fma:
        fma_n, fma_why = fma, 'given (--fma-per-cycle)'
    if ghz:
        f, f_why = ghz, 'given (--ghz)'
    i8, i8_why = int8_factor(flags)
    if measured and measured.get('u8s8_per_cycle_vnni512') and not fma:
        table = i8
        i8 = round(measured['u8s8_per_cycle_vnni512'] / fma_n)
        i8_why = (f'measured by ephost_cpu_clock: {measured["u8s8_per_cycle_vnni512"]} u8*s8 products per cycle with '
                  f'AVX-512 VNNI; table: {table}x, {i8_why}')
    return {
        'cpu': info.get('model name', '?'),
        'cores': os.cpu_count(),
        'ghz': f, 'ghz_source': f_why,
        'fma_per_cycle': fma_n, 'fma_source': fma_why,
        'f32_gflops_per_core': f * fma_n * 2,
        'int8_factor': i8, 'int8_source': i8_why,
        'int8_gops_per_core': f * fma_n * 2 * i8,
        'ort_isa': mlas_isa(flags),
    }


if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--ghz', type=float)
    ap.add_argument('--fma-per-cycle', type=int)
    ap.add_argument('--probe', default=os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                                    'build', 'benchmarks', 'ephost_cpu_clock'))
    a = ap.parse_args()
    print(json.dumps(machine_peak(a.ghz, a.fma_per_cycle, a.probe), indent=1))
