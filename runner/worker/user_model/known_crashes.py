"""Layers a backend is known to crash on, found in the model before it runs there, so the
backend's cell is recorded failed with the reason instead of aborting (or hanging) its worker.

torch 2.13's oneDNN (v3.12): the AVX2 backward-weights kernel of a strided 1x1 convolution
corrupts the heap when its channels-last input has fewer than 8 channels (its AVX2 block).
Keras on torch feeds Conv2D a channels-last tensor, so training such a model on the CPU
aborts in free(), segfaults or hangs (reproduced with plain torch; 2-4 channels crash,
8-20 do not, nor stride 1, nor a forward pass). PyTorch's own modules use contiguous NCHW."""

from __future__ import annotations

#: Fewer input channels than this, at a strided 1x1 Conv2D, hit the oneDNN kernel's bug.
ONEDNN_MIN_CHANNELS = 8
#: The CPU flag whose presence gives oneDNN its AVX-512 kernels instead of the AVX2 one.
AVX512_FLAG = "avx512f"


def strided_small_1x1(model) -> list[dict]:
    """The model's strided 1x1 channels-last Conv2D layers with fewer than
    ONEDNN_MIN_CHANNELS input channels (a built Keras model: its kernels exist)."""
    import keras

    layers = (model._flatten_layers(include_self=False, recursive=True)
              if hasattr(model, "_flatten_layers") else model.layers)
    found = []
    for layer in layers:
        if not isinstance(layer, keras.layers.Conv2D) or tuple(layer.kernel_size) != (1, 1):
            continue
        strides = [int(s) for s in layer.strides]
        channels = int(layer.kernel.shape[2]) * int(layer.groups)
        if (max(strides) > 1 and layer.data_format == "channels_last"
                and channels < ONEDNN_MIN_CHANNELS):
            found.append({"layer": layer.name, "strides": strides, "input_channels": channels})
    return found


def onednn_refusal(facts: dict, backend: str, training: bool, device: str,
                   flags: set[str]) -> str:
    """Why Keras on `backend` must not train this model here ('' when it may): a layer of
    facts["onednn_strided_1x1"] would crash torch's oneDNN on an AVX2 CPU."""
    layers = facts.get("onednn_strided_1x1") or []
    if backend != "torch" or not training or device != "cpu" or not layers:
        return ""
    if AVX512_FLAG in flags:
        return ""
    first = layers[0]
    strides = "x".join(map(str, first["strides"]))
    return (f"not run: layer {first['layer']!r} (1x1 Conv2D, strides {strides}, "
            f"{first['input_channels']} input channels) would crash torch's oneDNN (seen in "
            f"torch 2.13): its AVX2 backward pass of a strided 1x1 convolution corrupts the "
            f"heap below {ONEDNN_MIN_CHANNELS} channels; the other backends train it")
