"""Internals of :mod:`wsc.export`: capture a step with make_fx, lower it to MLIR text.

Layout:
  capture.py     argument checks, the step's parameters and buffers (which ones it
                 updates), and the make_fx capture of a training/forward step; the
                 next seven entries are helpers it calls, and none calls it back
  repeated.py    a deep stack of identical blocks: traced at depths 4 and 5, instantiated
                 to its full depth (capture.py falls back to tracing every block)
  names.py       fx node names in constant time (fx's namer is quadratic per op name)
  lazy_graph_module.py   a GraphModule that writes its Python code when first run
  recurrent.py   nn.RNN / GRU / LSTM (and cells) unrolled over the sequence while capturing
  draws.py       random ops (dropout) -> uniform draws the runtime fills (wsc.random)
  loss_rewrites.py, constants.py   stock losses in traceable form; their constant tensors
  provenance.py  remembers which nn.Module every captured aten op came from
  optimizer.py   torch optimizer -> ``wsc.optimizer`` / ``wsc.param_groups``
  emitter.py     MLIR text builder (types, attributes, SSA names, linalg.generic)
  lowering/      one function per aten op, registered in a table:
                   registry.py (table + Context), graph.py (walks the fx graph),
                   elementwise.py, reductions.py, linalg_ops.py, shapes.py,
                   creation.py, losses.py, inplace.py, slicing.py, indexing.py,
                   convolution.py (+ conv_kernels.py), pooling.py, batchnorm.py
                   (+ nchw.py helpers), sign.py, supported.py (declared modules),
                   vts.py (wsc.nn.strip_padding / restore_padding markers)
  module.py      assembles the func signature and the module around the body
  errors.py      UnsupportedOpError (public as wsc.export.UnsupportedOpError)
  coverage.py    writes docs/Coverage.md from the tables
"""
