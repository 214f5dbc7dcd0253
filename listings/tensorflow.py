"""TensorFlow (its own API: tf.Module, tf.Variable, GradientTape): a small classifier and
its training loop."""
import tensorflow as tf


class Classifier(tf.Module):
    def __init__(self, inputs: int, classes: int):
        super().__init__()
        init = tf.keras.initializers.GlorotUniform()
        self.w1 = tf.Variable(init([inputs, 64]))
        self.b1 = tf.Variable(tf.zeros([64]))
        self.w2 = tf.Variable(init([64, classes]))
        self.b2 = tf.Variable(tf.zeros([classes]))

    def __call__(self, x):
        hidden = tf.nn.relu(x @ self.w1 + self.b1)
        return hidden @ self.w2 + self.b2


def build_model(inputs: int, classes: int) -> tf.Module:
    return Classifier(inputs, classes)


def train(model: tf.Module, x, y, epochs: int = 1, batch_size: int = 32) -> float:
    optimizer = tf.keras.optimizers.SGD(learning_rate=0.1)
    data = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(len(x)).batch(batch_size)

    @tf.function
    def step(batch_x, batch_y):
        with tf.GradientTape() as tape:
            logits = model(batch_x)
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=batch_y, logits=logits))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    for _ in range(epochs):
        for batch_x, batch_y in data:
            loss = step(batch_x, batch_y)
    return float(loss)
