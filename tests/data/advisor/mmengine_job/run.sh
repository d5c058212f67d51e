#!/usr/bin/env bash
# Fixture: an mmengine-style config with _base_ inheritance, launched through a wrapper script.
bash tools/dist_train.sh configs/resnet18_cifar.py 4
