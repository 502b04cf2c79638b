// RUN: wsc-opt %s --wsc-attach-target="systems=4" | FileCheck %s --check-prefix=SYS
// RUN: wsc-opt %s --wsc-attach-target="target=tiny stream-dtype=f32" | FileCheck %s --check-prefix=TINY
// RUN: not wsc-opt %s --wsc-attach-target="target=cs3" 2>&1 | FileCheck %s --check-prefix=PRESET
// RUN: not wsc-opt %s --wsc-attach-target="stream-dtype=f8" 2>&1 | FileCheck %s --check-prefix=DTYPE

// SYS: module attributes {wsc.target = #wsc.target<systems = 4>}
// TINY: module attributes {wsc.target = #wsc.target<grid_x = 16, grid_y = 16, weight_dtype = f32>}
// PRESET: error: unknown target preset 'cs3'; expected cs2 or tiny
// DTYPE: error: unknown stream-dtype 'f8'; expected f16, bf16 or f32
module {}
// RUN: not wsc-opt %s --wsc-attach-target="systems=-2" 2>&1 | FileCheck %s --check-prefix=SYSTEMS
// SYSTEMS: error: systems must be positive, got -2
