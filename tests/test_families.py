"""One declaration per model family (dlbench.runner.models.families): a new family needs nothing but
its declaration and its own parts to be sized, counted, built in each framework, checked
against the float64 reference and described."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dlbench.runner.models import definitions as models
from dlbench.runner.models.families import FAMILIES, family_of
from dlbench.runner.cell.frameworks import FRAMEWORKS, missing_modules

ROOT = Path(__file__).resolve().parents[1]
INSTALLED = sorted({f.framework for f in FRAMEWORKS if not missing_modules(f)})


def test_every_family_is_declared_once_with_each_frameworks_builder():
    assert [family.name for family in FAMILIES] == ["resnet", "transformer", "lstm"]
    for definition in (models.RESNET_TINY, models.TRANSFORMER_TINY, models.LSTM_TINY):
        assert family_of(definition).name == definition.family
    assert all(set(family.builders) == {"pytorch", "tensorflow", "keras"}
               for family in FAMILIES)


def test_an_undeclared_definition_is_refused_naming_the_declared_families():
    with pytest.raises(ValueError, match="declared: resnet, transformer, lstm"):
        family_of(object())


#: The new family's own parts: a definition, its weight shapes, its multiply-adds, its
#: float64 forward, its conventions in words and one builder per framework.
PARTS = textwrap.dedent('''
    from dataclasses import dataclass
    from typing import ClassVar

    import numpy as np

    @dataclass(frozen=True)
    class TwoLayerDefinition:
        family: ClassVar[str] = "two-layer"
        name: str = "two-layer-tiny"
        inputs: int = 6
        hidden: int = 5
        classes: int = 10

        @property
        def input_shape(self):
            return (self.inputs,)

    def shapes(d):
        return {"hidden.kernel": (d.inputs, d.hidden), "hidden.bias": (d.hidden,),
                "head.kernel": (d.hidden, d.classes), "head.bias": (d.classes,)}

    def macs(d):
        return d.inputs * d.hidden + d.hidden * d.classes

    def reference(f, d, x):
        return f.dense(np.maximum(f.dense(np.asarray(x, np.float64), "hidden"), 0.0), "head")

    def notes(conventions):
        return ["one ReLU between the two dense layers"]

    def torch_model(d, conventions):
        import torch
        from torch import nn
        from dlbench.runner.models.pytorch import _dense

        class TwoLayer(nn.Module):
            def __init__(self):
                super().__init__()
                self.bindings = {}
                self.hidden = _dense(self.bindings, "hidden", d.inputs, d.hidden)
                self.head = _dense(self.bindings, "head", d.hidden, d.classes)

            def forward(self, x):
                return self.head(torch.relu(self.hidden(x)))

        return TwoLayer()

    def tf_model(d, weights, conventions, compute_dtype):
        import tensorflow as tf
        from dlbench.runner.models.tensorflow import CanonicalModule

        class TwoLayer(CanonicalModule):
            def __call__(self, x, training=False):
                h = tf.nn.relu(tf.matmul(x, self["hidden.kernel"]) + self["hidden.bias"])
                return tf.matmul(h, self["head.kernel"]) + self["head.bias"]

        return TwoLayer(d, weights, conventions, compute_dtype)

    def keras_model(d, conventions):
        import keras
        from keras import layers

        x = keras.Input((d.inputs,))
        h = layers.Dense(d.hidden, activation="relu", name="hidden")(x)
        return keras.Model(x, layers.Dense(d.classes, name="head")(h), name=d.name)
''')

NEW_FAMILY = textwrap.dedent('''
    import json, sys
    import numpy as np
    sys.path.insert(0, sys.argv[1])
    from dlbench.runner.models import families
    from two_layer import TwoLayerDefinition
    families.FAMILIES.append(families.Family(
        TwoLayerDefinition, "two_layer:shapes", "two_layer:macs", "two_layer:reference",
        "two_layer:notes", {"pytorch": "two_layer:torch_model",
                            "tensorflow": "two_layer:tf_model", "keras": "two_layer:keras_model"}))

    from dlbench.runner.models.reference_forward import forward
    from dlbench.runner.models.conventions import fairness_note
    from dlbench.runner.models.flops import forward_flops
    from dlbench.runner.models.weights import initial_weights, parameter_count
    d = TwoLayerDefinition()
    weights = initial_weights(d)
    x = np.random.default_rng(3).uniform(-1, 1, size=(4, d.inputs)).astype(np.float32)
    expected = forward(d, weights, x)[0]

    def built(framework):
        if framework == "pytorch":
            import torch
            from dlbench.runner.models import pytorch
            model = pytorch.build(d, weights)
            return model(torch.from_numpy(x)).detach().numpy(), pytorch.read_weights(model)
        if framework == "tensorflow":
            import tensorflow as tf
            from dlbench.runner.models import tensorflow
            model = tensorflow.build(d, weights)
            return model(tf.constant(x)).numpy(), tensorflow.read_weights(model)
        import keras
        from dlbench.runner.models import keras as keras_models
        model = keras_models.build(d, weights)
        return (keras.ops.convert_to_numpy(model(x)), keras_models.read_weights(model, d))

    deviation, read_back = {}, {}
    for framework in sys.argv[2:]:
        logits, weights_back = built(framework)
        deviation[framework] = float(np.max(np.abs(logits - expected)))
        read_back[framework] = all(np.array_equal(weights_back[k], weights[k]) for k in weights)

    from dlbench.runner.driver.plan.cells import plan_cells
    from dlbench.runner.driver.plan.request import RunRequest
    from dlbench.runner.workloads import catalog
    catalog.WORKLOADS["two-layer-tokens"] = catalog.Workload(
        "two-layer-tokens", d.family, "synthetic-tokens", 8, 0.05, 0.9, 0.9, "two dense layers",
        profiles=(catalog.SizeProfile("cpu", d, 8, words="Two-layer, 6 inputs"),
                  catalog.SizeProfile("gpu", d, 16), catalog.SizeProfile("tiny", d, 4)))
    planned = plan_cells(RunRequest(suite="quick", workloads=["two-layer-tokens"],
                                    frameworks=["pytorch"]), "cpu")
    from dlbench.runner.driver.commands.run import planned_words
    from dlbench.report.render import labels
    recorded = planned_words(planned, "cpu")  # what the run's run.json records
    labels.use_recorded_words([("cpu", recorded)])
    print(json.dumps({"parameters": parameter_count(d), "flops": forward_flops(d),
                      "note": fairness_note(d), "deviation": deviation,
                      "read_back": read_back, "spread": float(np.ptp(expected)),
                      "planned": sorted({(c.experiment, c.batch_size) for c in planned}),
                      "recorded": recorded,
                      "label": labels.ids_in_words("workload two-layer-tokens, system pytorch")}))
''')


@pytest.mark.slow
def test_a_new_family_is_sized_built_planned_and_matches_its_reference(tmp_path):
    """What issue 33 asks of a family: its declaration and its own parts, no other edit (and
    a workload declared on it, for a request to plan it in a suite)."""
    (tmp_path / "two_layer.py").write_text(PARTS)
    done = subprocess.run([sys.executable, "-c", NEW_FAMILY, str(tmp_path), *INSTALLED],
                          cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    facts = json.loads(done.stdout.splitlines()[-1])
    assert facts["parameters"] == 6 * 5 + 5 + 5 * 10 + 10
    assert facts["flops"] == 2 * (6 * 5 + 5 * 10)
    assert facts["note"].endswith("one ReLU between the two dense layers")
    assert set(facts["deviation"]) == set(INSTALLED) and INSTALLED
    assert facts["spread"] > 0.1  # logits that differ, so agreeing with them means something
    assert all(deviation < 1e-5 for deviation in facts["deviation"].values()), facts
    assert all(facts["read_back"].values()), facts
    # planned in a suite once its workload is declared: the quick suite's experiments,
    # training at its CPU profile's batch, parity at its tiny one's, inference at batch 1
    assert facts["planned"] == [["inference", 1], ["parity", 4], ["training", 8]]
    # labelled on its pages by the words its workload declared, which the run records
    assert facts["recorded"] == {"two-layer-tokens": "Two-layer, 6 inputs"}
    assert facts["label"] == "Two-layer, 6 inputs, PyTorch"
