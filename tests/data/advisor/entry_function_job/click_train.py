import click


@click.command()
@click.option("--batch-size", "-b", default=48, type=int)
@click.option("--max-steps", default=20000)
def cli(batch_size, max_steps):
    pass


if __name__ == "__main__":
    cli()
