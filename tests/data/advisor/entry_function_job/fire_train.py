import fire
import torch


def main(model_name: str = "distilgpt2", batch_size: int = 12, epochs=2, lr=3e-4, bf16=True,
         *extra, seed: int = 0):
    device = "cuda"
    print(model_name, batch_size, epochs, lr, device)


if __name__ == "__main__":
    fire.Fire(main)
