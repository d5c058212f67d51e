import argparse

import tensorflow as tf
import tensorflow_datasets as tfds


def build(lr):
    net = tf.keras.Sequential([
        tf.keras.layers.Conv2D(16, 3, activation="relu"),
        tf.keras.layers.Conv2D(32, 3, activation="relu"),
        tf.keras.layers.GlobalAveragePooling2D(),
        tf.keras.layers.Dense(10),
    ])
    net.compile(optimizer=tf.keras.optimizers.Adam(lr), loss="sparse_categorical_crossentropy")
    return net


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--per_worker_batch", dest="batch_size", type=int, default=32)
    p.add_argument("--lr", type=float, default=0.0005)
    args = p.parse_args()
    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    global_batch = args.batch_size * strategy.num_replicas_in_sync
    lr = args.lr * strategy.num_replicas_in_sync
    train = tfds.load(name="cifar10", split="train", as_supervised=True).batch(global_batch)
    with strategy.scope():
        model = build(lr)
    model.fit(train, epochs=15)


if __name__ == "__main__":
    main()
