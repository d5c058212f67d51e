# Base: model, data, schedule.
model = dict(type='ImageClassifier', backbone=dict(type='ResNet', depth=50))
optimizer = dict(type='SGD', lr=0.1, momentum=0.9, weight_decay=1e-4)
train_cfg = dict(by_epoch=True, max_epochs=100)
train_dataloader = dict(
    batch_size=32,
    num_workers=4,
    dataset=dict(type='CIFAR10', data_root='data/cifar10'))
val_dataloader = dict(batch_size=256)
