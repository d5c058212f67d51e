# Fixture training program: Hydra decides the configuration.
import hydra
import torch
import lightning as L


@hydra.main(config_path="conf", config_name="config", version_base=None)
def main(cfg):
    model = hydra.utils.instantiate(cfg.model)
    trainer = L.Trainer(max_epochs=cfg.trainer.max_epochs, precision=cfg.trainer.precision)
    trainer.fit(model)


if __name__ == "__main__":
    main()
