"""Keras 3: a small classifier and its training (compile and fit)."""
import keras


def build_model(inputs: int, classes: int) -> keras.Model:
    return keras.Sequential([
        keras.Input(shape=(inputs,)),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(classes),
    ])


def train(model: keras.Model, x, y, epochs: int = 1, batch_size: int = 32) -> float:
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.1),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    history = model.fit(x, y, epochs=epochs, batch_size=batch_size, verbose=0)
    return history.history["loss"][-1]
