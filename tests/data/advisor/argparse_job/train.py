import argparse

import torch
import yaml

parser = argparse.ArgumentParser()
parser.add_argument('--config', type=str, default=None)
parser.add_argument('--model', type=str, default='resnet18')
parser.add_argument('--lr', type=float, default=0.1)
parser.add_argument('--batch-size', type=int, default=32,
                    help='per-GPU batch size')
parser.add_argument('--epochs', type=int, default=90)
parser.add_argument('--amp', action='store_true')
args = parser.parse_args()
if args.config:
    with open(args.config) as f:
        parser.set_defaults(**yaml.safe_load(f))
    args = parser.parse_args()

args.epochs = 60  # in-code override: always 60 epochs
optimizer = torch.optim.SGD([], lr=args.lr, momentum=0.9)
