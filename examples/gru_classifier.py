"""An example model for `dlbench run --model`: a small GRU sequence classifier in Keras 3,
a kind of model the built-in workloads do not cover (a recurrent layer over time steps).

    dlbench run --model examples/gru_classifier.py:build

(the input shape, 20 steps of 8 features, is the one its keras.Input declares).
`build` returns the model compiled with its loss and optimizer, so dlbench measures its
training step as well as its inference; dlbench loads the same weights into it on every
installed Keras backend.
"""

import keras

TIME_STEPS, FEATURES, CLASSES = 20, 8, 4


def build() -> keras.Model:
    """GRU(32) over 20 steps of 8 features, then a 4-way classifier (logits)."""
    inputs = keras.Input(shape=(TIME_STEPS, FEATURES))
    hidden = keras.layers.GRU(32)(inputs)
    outputs = keras.layers.Dense(CLASSES)(hidden)
    model = keras.Model(inputs, outputs, name="gru_classifier")
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.01, momentum=0.9),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model
