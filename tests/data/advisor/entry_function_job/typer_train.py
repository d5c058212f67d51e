import typer

app = typer.Typer()


@app.command()
def fit(
    dataset: str = typer.Option("cifar10", help="which data"),
    epochs: int = typer.Option(40),
    batch_size: int = 96,
):
    pass


if __name__ == "__main__":
    app()
