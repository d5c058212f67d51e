import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=1)
parser.add_argument("--batch-size", type=int, default=8)
args = parser.parse_args()

for epoch in range(args.epochs):
    print(f"epoch {epoch}")
