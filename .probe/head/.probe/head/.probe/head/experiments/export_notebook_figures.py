"""Execute each notebook and save its first figure as notebooks/figures/<name>.png (the README shows them).

python experiments/export_notebook_figures.py
"""

from __future__ import annotations

import base64
import pathlib

import nbclient
import nbformat

NOTEBOOKS = pathlib.Path(__file__).resolve().parents[1] / "notebooks"


def main() -> None:
    out = NOTEBOOKS / "figures"
    out.mkdir(exist_ok=True)
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        notebook = nbformat.read(path, as_version=4)
        nbclient.NotebookClient(
            notebook, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOKS)}}
        ).execute()
        image = next(
            o["data"]["image/png"]
            for cell in notebook.cells
            if cell.cell_type == "code"
            for o in cell.outputs
            if "image/png" in o.get("data", {})
        )
        (out / f"{path.stem}.png").write_bytes(base64.b64decode(image))
        print(f"{path.stem}: {out / (path.stem + '.png')}")


if __name__ == "__main__":
    main()
