"""Execute each notebook on this machine's CPU and commit-ready: save it with its outputs (so that a code host shows
the figures without running it) and its first figure as notebooks/figures/<name>.png (the README shows them).

    python experiments/export_notebook_figures.py

Each runs with the results store in a temporary folder (the notebooks' runs are not kept) and the inline
matplotlib backend; execution counts restart at 1, and the kernel's metadata is left as the notebook had it.
"""

from __future__ import annotations

import base64
import os
import pathlib
import tempfile

import nbclient
import nbformat

NOTEBOOKS = pathlib.Path(__file__).resolve().parents[1] / "notebooks"


def main() -> None:
    out = NOTEBOOKS / "figures"
    out.mkdir(exist_ok=True)
    os.environ["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
    with tempfile.TemporaryDirectory() as store:
        os.environ["FPA_STORE"] = store
        for path in sorted(NOTEBOOKS.glob("*.ipynb")):
            notebook = nbformat.read(path, as_version=4)
            nbclient.NotebookClient(
                notebook, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOKS)}}
            ).execute()
            notebook.metadata.pop("widgets", None)
            nbformat.write(notebook, path)
            image = next(
                o["data"]["image/png"]
                for cell in notebook.cells
                if cell.cell_type == "code"
                for o in cell.outputs
                if "image/png" in o.get("data", {})
            )
            (out / f"{path.stem}.png").write_bytes(base64.b64decode(image))
            print(f"{path.stem}: {path} ({path.stat().st_size // 1000} kB), {out / (path.stem + '.png')}")


if __name__ == "__main__":
    main()
