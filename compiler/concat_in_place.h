// A Concat without a kernel: its inputs are computed straight into their places in its output.
//
// DenseNet concatenates every earlier feature map before each layer, so copying the inputs costs
// a block's whole feature stack per layer (6 % of a tuned DenseNet-121's run on Zen 5). When
// each input's elements are one contiguous range of the output's (a channel Concat in
// NCHW[b]c with a batch of one and whole blocks), the storage of every input can instead be a
// view at its offset inside the output's: the kernels that produce the inputs write the output.
#pragma once

#include <vector>

#include "runtime/model_artifact.h"

namespace kiln::compiler {

// Places `inputs` (value ids, in order) inside `output` (an intermediate without storage of its
// own yet: no step has written it), input i at the sum of the earlier inputs' element counts:
// the storage each input's view chain ends at (resolve_view) becomes a view of `output` at the
// offset that puts that input in its place. Returns false and changes nothing unless every
// such storage is a float32 intermediate other than `output`, all of it falls inside `output`,
// inputs sharing one storage agree on where it goes, distinct storages do not overlap, each
// starts 64-byte aligned (a multiple of 16 floats) and the inputs fill `output` exactly.
// REQUIRES: the caller knows that input i's elements, in order, are the output's range at that
// offset (the layout makes the Concat a sequence of contiguous copies).
bool place_concat_inputs(std::vector<ModelValue>& values, const std::vector<int>& inputs,
                         int output);

}  // namespace kiln::compiler
