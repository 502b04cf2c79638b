"""The torch.nn modules and losses wsc declares supported, with their options
and limits: the declared half of docs/Coverage.md (``python -m
wsc._export.coverage`` writes it; the aten-op tables there come from
``LOWERINGS``, capture's ``DECOMPOSITIONS`` and the random draws).

Each entry names the aten ops (overload packets) its training step relies
on; the generator checks them against those tables, so an entry cannot
outlive its lowering. Add an entry with the parity test that shows it.
"""

from typing import NamedTuple, Tuple

import torch

aten = torch.ops.aten


class Entry(NamedTuple):
    names: str                  # the torch.nn classes, e.g. "Conv1d, Conv2d"
    ops: Tuple[object, ...]     # aten overload packets the step needs
    notes: str                  # options and limits


# Activation modules: each is one aten op and its backward (or decomposition).
_ACTIVATIONS = (
    Entry("ReLU, ReLU6, Hardtanh", (aten.relu, aten.hardtanh, aten.threshold_backward,
                                    aten.hardtanh_backward), "in place too"),
    Entry("LeakyReLU, ELU, SiLU", (aten.leaky_relu, aten.leaky_relu_backward, aten.elu,
                                   aten.silu), "in place too"),
    Entry("GELU", (aten.gelu, aten.gelu_backward), "`approximate` none and tanh"),
    Entry("Sigmoid, Tanh, Softplus", (aten.sigmoid, aten.tanh, aten.sigmoid_backward,
                                      aten.tanh_backward, aten.softplus), ""),
    Entry("Hardswish, Hardsigmoid", (aten.hardswish, aten.hardsigmoid,
                                     aten.hardswish_backward, aten.hardsigmoid_backward),
          "in place too"),
    Entry("Softmax, LogSoftmax", (aten._softmax, aten._log_softmax,
                                  aten._softmax_backward_data,
                                  aten._log_softmax_backward_data),
          "max-subtracted, as the eager kernels"),
)

MODULES: Tuple[Entry, ...] = (
    Entry("Linear", (aten.addmm, aten.mm, aten.t), "with or without bias"),
    Entry("Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d",
          (aten.convolution, aten.convolution_backward),
          "any stride, zero padding, dilation, groups, output_padding; no 3-D"),
    Entry("MaxPool2d", (aten.max_pool2d_with_indices, aten.max_pool2d_with_indices_backward),
          "2-D windows only"),
    Entry("AvgPool2d", (aten.avg_pool2d, aten.avg_pool2d_backward), "2-D windows only"),
    Entry("AdaptiveAvgPool2d", (aten._adaptive_avg_pool2d, aten._adaptive_avg_pool2d_backward),
          "any output size (PyTorch's bins)"),
    Entry("BatchNorm1d, BatchNorm2d", (aten.native_batch_norm, aten.native_batch_norm_backward),
          "training: batch statistics all-reduced across systems, running statistics as "
          "buffers (in MemoryX, or resident on the wafer layer pipelined); eval mode"),
    Entry("LayerNorm", (aten.native_layer_norm, aten.native_layer_norm_backward), ""),
    Entry("GroupNorm", (aten.native_group_norm, aten.native_group_norm_backward), ""),
    Entry("Embedding", (aten.embedding, aten.embedding_dense_backward),
          "padding_idx, max_norm (the renorm writes the weight before its update); not "
          "scale_grad_by_freq or sparse"),
    Entry("Dropout", (aten.bernoulli_,),
          "training: masks drawn by the runtime's RNG (reproducible, independent of the "
          "number of systems); in place too"),
    Entry("MultiheadAttention, TransformerEncoderLayer, TransformerDecoderLayer, "
          "TransformerEncoder, TransformerDecoder",
          (aten.bmm, aten._softmax, aten.native_layer_norm),
          "batch_first either way (sequence-first: wsc.compile's batch_dim); self- and "
          "cross-attention, kdim/vdim, attention and key padding masks, dropout; on several "
          "systems too"),
    Entry("RNN, GRU, LSTM, RNNCell, GRUCell, LSTMCell", (aten.mm, aten.sigmoid, aten.tanh,
                                                          aten.cat),
          "unrolled while tracing: layers, bidirectional, batch_first either way (the batch "
          "dims of sequence-first tokens and states are inferred), initial state, dropout "
          "between layers; padded tensors, not PackedSequence"),
    Entry("Upsample", (aten.upsample_nearest2d, aten.upsample_bilinear2d,
                       aten.upsample_nearest1d, aten.upsample_linear1d),
          "modes nearest, bilinear and linear (1-D and 2-D), by size or scale factor, either "
          "align_corners (F.interpolate too): constant interpolation matrices; not bicubic, "
          "nearest-exact or 3-D"),
    Entry("PixelShuffle, PixelUnshuffle", (aten.pixel_shuffle, aten.pixel_unshuffle),
          "views and a permutation"),
    Entry("PReLU", (aten.prelu, aten.prelu_backward), "one weight or one per channel"),
    Entry("Bilinear", (aten._trilinear,), "with or without bias"),
    Entry("EmbeddingBag", (aten.embedding, aten.amax),
          "fixed-size bags (2-D input): modes sum (per_sample_weights too), mean, max, "
          "padding_idx; not offsets (bags of data-dependent size) or max_norm"),
    Entry("InstanceNorm2d", (aten.native_batch_norm, aten.repeat),
          "affine or not; not track_running_stats"),
    Entry("Flatten, Unflatten, Identity, Sequential, ModuleList, ModuleDict",
          (aten.view,), "views and containers"),
) + _ACTIVATIONS

# Losses with their options; every one on 1 and several systems in
# python/tests/test_losses.py.
_REDUCTIONS = "reduction mean, sum, none (a loss_fn must return a scalar: reduce `none` in it)"
LOSSES: Tuple[Entry, ...] = (
    Entry("CrossEntropyLoss", (aten.nll_loss_forward, aten.nll_loss2d_forward,
                               aten.nll_loss_backward, aten.nll_loss2d_backward,
                               aten._log_softmax),
          "class labels on (N, C) or (N, C, d1, ...) scores: weight, ignore_index (-100 or "
          "a class), label_smoothing; class probabilities: weight, label_smoothing; "
          + _REDUCTIONS + ". The mean over kept labels divides by their total weight "
          "over the whole batch; every label ignored gives nan, as in PyTorch"),
    Entry("NLLLoss", (aten.nll_loss_forward, aten.nll_loss2d_forward, aten.nll_loss_backward,
                      aten.nll_loss2d_backward),
          "weight, ignore_index, (N, C, d1, ...) inputs; " + _REDUCTIONS),
    Entry("BCEWithLogitsLoss", (aten.binary_cross_entropy_with_logits, aten.sigmoid),
          "weight, pos_weight; " + _REDUCTIONS),
    Entry("MSELoss", (aten.mse_loss, aten.mse_loss_backward), _REDUCTIONS),
    Entry("L1Loss", (aten.abs, aten.sgn), _REDUCTIONS),
    Entry("SmoothL1Loss", (aten.smooth_l1_loss, aten.smooth_l1_loss_backward),
          "beta (0 too); " + _REDUCTIONS),
    Entry("HuberLoss", (aten.huber_loss, aten.huber_loss_backward), "delta; " + _REDUCTIONS),
    Entry("BCELoss", (aten.binary_cross_entropy, aten.binary_cross_entropy_backward),
          "weight; " + _REDUCTIONS + "; log clamped at -100 as in PyTorch"),
    Entry("KLDivLoss", (aten.xlogy, aten.log), "log_target; " + _REDUCTIONS + ", batchmean"),
    Entry("CosineEmbeddingLoss", (aten.sqrt, aten.clamp_min), "margin; " + _REDUCTIONS),
    Entry("MarginRankingLoss", (aten.clamp_min,), "margin; " + _REDUCTIONS),
    Entry("MultiLabelSoftMarginLoss", (aten.log_sigmoid_forward, aten.log_sigmoid_backward),
          "weight; " + _REDUCTIONS),
    Entry("TripletMarginLoss", (aten.norm, aten.clamp_min), "margin, p, swap; " + _REDUCTIONS),
)
