// RUN: wsc-opt %s --wsc-attach-target="systems=4" | FileCheck %s --check-prefix=SYS
// RUN: wsc-opt %s --wsc-attach-target="target=tiny stream-dtype=f32" | FileCheck %s --check-prefix=TINY
// RUN: not wsc-opt %s --wsc-attach-target="target=cs3" 2>&1 | FileCheck %s --check-prefix=PRESET
// RUN: not wsc-opt %s --wsc-attach-target="stream-dtype=f8" 2>&1 | FileCheck %s --check-prefix=DTYPE
// RUN: wsc-opt %s --wsc-attach-target="target=cs2 grid=96x64" | FileCheck %s --check-prefix=GRID
// RUN: wsc-opt %s --wsc-attach-target="target=tiny grid=8x4" | FileCheck %s --check-prefix=TINYGRID
// RUN: not wsc-opt %s --wsc-attach-target="grid=96" 2>&1 | FileCheck %s --check-prefix=BADGRID
// RUN: not wsc-opt %s --wsc-attach-target="grid=0x4" 2>&1 | FileCheck %s --check-prefix=ZEROGRID
// RUN: not wsc-opt %s --wsc-attach-target="grid=70000x4" 2>&1 | FileCheck %s --check-prefix=HUGEGRID

// SYS: module attributes {wsc.target = #wsc.target<systems = 4>}
// TINY: module attributes {wsc.target = #wsc.target<grid_x = 16, grid_y = 16, weight_dtype = f32>}
// PRESET: for the --target option: Cannot find option named 'cs3'!
// DTYPE: for the --stream-dtype option: Cannot find option named 'f8'!
// GRID: module attributes {wsc.target = #wsc.target<grid_x = 96, grid_y = 64>}
// TINYGRID: module attributes {wsc.target = #wsc.target<grid_x = 8, grid_y = 4>}
// BADGRID: error: grid must be WxH with W and H in [1, 65536], got '96'
// ZEROGRID: error: grid must be WxH with W and H in [1, 65536], got '0x4'
// HUGEGRID: error: grid must be WxH with W and H in [1, 65536], got '70000x4'
module {}
// RUN: not wsc-opt %s --wsc-attach-target="systems=-2" 2>&1 | FileCheck %s --check-prefix=SYSTEMS
// SYSTEMS: error: systems must be in [1, 2^20] (0: keep the module's), got -2
