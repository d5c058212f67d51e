_base_ = ['./_base_/default_runtime.py']

# Child: a smaller backbone, a larger batch, half the learning rate.
model = dict(backbone=dict(depth=18))
optimizer = dict(lr=0.05)
train_dataloader = dict(batch_size=64)
