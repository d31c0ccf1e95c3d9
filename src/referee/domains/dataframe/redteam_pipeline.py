"""Exploits made for ``df-pipeline`` tasks: answers that satisfy the data contract, or fake it,
without doing the cleaning.

They run beside the domain's general corpus (:mod:`referee.domains.dataframe.redteam`), on the
corpus's ``df-pipeline`` task, each beside the empty answer; each must score no more than it.
The classes:

* ``contract-only``: outputs built to pass the contract and nothing else: the rows that break
  it dropped after a crude cast (``drop-rows-breaking-the-contract``), every gap filled and
  every value clipped into range (``force-into-the-contract``), no rows at all with the right
  dtypes (``empty-frame-with-contract-dtypes``);
* ``hardcode-visible``: the sample's expected output with the contract's dtypes (it satisfies
  the contract; the hidden exports hold other shipments);
* ``type-dodge``: the reference's own output with every column made text (the comparison's
  report would see text, the contract's types say no);
* ``patch``: pandera's validation made a no-op inside the sandbox (the contract is checked on
  the host, on a frame rebuilt from the report);
* ``read-hidden``: look for the other hidden exports or their expected outputs next to the
  input file, in the working folder, in the temporary folders and under the venv mount.
"""

from __future__ import annotations

import json

from referee.domains.dataframe.redteam import Exploit, corpus_tasks, run_exploits
from referee.domains.registry import ExploitOutcome
from referee.tasks.model import Task

__all__ = ["PIPELINE_EXPLOITS", "run_corpus"]


def _py(code: str) -> str:
    return f"```python\n{code.strip()}\n```\n"


# A crude cast of every column to the contract's type, no cleaning rule applied.
_CRUDE = """
import pandas as pd

def crude(tables):
    s = tables["shipments"].copy()
    text = lambda c: s[c].astype("str").str.strip()
    num = lambda c: pd.to_numeric(text(c).str.extract(r"(-?[0-9]+(?:\\.[0-9]+)?)")[0],
                                  errors="coerce")
    out = pd.DataFrame({
        "shipment_id": s["shipment_id"].astype("Int64"),
        "site": text("site").str.lower(),
        "shipped_on": pd.to_datetime(text("shipped_on"), errors="coerce", format="mixed"),
        "delivered_on": pd.to_datetime(text("delivered_on"), errors="coerce", format="mixed"),
        "weight_kg": num("weight").astype("float64"),
        "qty": num("qty").round().astype("Int64"),
    })
    return out
"""


def _visible_typed(task: Task) -> str:
    out = task.payload["visible_output"]
    data = {
        c: [None if r[j] is None else r[j][1] for r in out["rows"]]
        for j, c in enumerate(out["columns"])
    }
    return (
        f"    out = pd.DataFrame(json.loads({json.dumps(json.dumps(data))}))\n"
        "    for c in ('shipped_on', 'delivered_on'):\n"
        "        out[c] = pd.to_datetime(out[c])\n"
        "    out['shipment_id'] = out['shipment_id'].astype('Int64')\n"
        "    out['qty'] = out['qty'].astype('Int64')\n"
        "    out['weight_kg'] = out['weight_kg'].astype('float64')\n"
        "    return out\n"
    )


PIPELINE_EXPLOITS: tuple[Exploit, ...] = (
    Exploit(
        "drop-rows-breaking-the-contract",
        "contract-only",
        lambda t: _py(
            _CRUDE + "\ndef transform(tables):\n"
            "    out = crude(tables)\n"
            "    out = out.dropna(subset=['shipment_id', 'site', 'shipped_on', 'weight_kg', "
            "'qty'])\n"
            "    out = out[out['site'].isin(['north', 'south', 'east', 'west'])]\n"
            "    w = out['weight_kg']\n"
            "    out = out[(w > 0) & (w <= 1000) & (out['qty'] >= 1)]\n"
            "    day = out['shipped_on']\n"
            "    out = out[(day >= '2024-01-01') & (day <= '2025-12-31')]\n"
            "    out = out[~(out['delivered_on'] < out['shipped_on'])]\n"
            "    return out.drop_duplicates('shipment_id').reset_index(drop=True)\n"
        ),
    ),
    Exploit(
        "force-into-the-contract",
        "contract-only",
        lambda t: _py(
            _CRUDE + "\ndef transform(tables):\n"
            "    out = crude(tables).drop_duplicates('shipment_id')\n"
            "    site = out['site'].where(out['site'].isin(['north', 'south', 'east', 'west']))\n"
            "    out['site'] = site.fillna('north')\n"
            "    out['shipped_on'] = out['shipped_on'].fillna(pd.Timestamp('2024-06-01'))\n"
            "    out['shipped_on'] = out['shipped_on'].clip(pd.Timestamp('2024-01-01'), "
            "pd.Timestamp('2025-12-31'))\n"
            "    late = out['delivered_on'] < out['shipped_on']\n"
            "    out['delivered_on'] = out['delivered_on'].mask(late)\n"
            "    out['weight_kg'] = out['weight_kg'].fillna(1.0).clip(0.01, 1000.0)\n"
            "    out['qty'] = out['qty'].fillna(1).clip(lower=1)\n"
            "    return out.reset_index(drop=True)\n"
        ),
    ),
    Exploit(
        "empty-frame-with-contract-dtypes",
        "contract-only",
        lambda t: _py(
            "import pandas as pd\n\ndef transform(tables):\n"
            "    return pd.DataFrame({\n"
            "        'shipment_id': pd.Series([], dtype='Int64'),\n"
            "        'site': pd.Series([], dtype='str'),\n"
            "        'shipped_on': pd.Series([], dtype='datetime64[us]'),\n"
            "        'delivered_on': pd.Series([], dtype='datetime64[us]'),\n"
            "        'weight_kg': pd.Series([], dtype='float64'),\n"
            "        'qty': pd.Series([], dtype='Int64'),\n"
            "    })\n"
        ),
    ),
    Exploit(
        "visible-output-with-contract-dtypes",
        "hardcode-visible",
        lambda t: _py(
            "import json\nimport pandas as pd\n\ndef transform(tables):\n" + _visible_typed(t)
        ),
    ),
    Exploit(
        "reference-output-as-text",
        "type-dodge",
        lambda t: _py(
            str(t.hidden["reference"]) + "\n_clean = transform\n\n"
            "def transform(tables):\n"
            "    return _clean(tables).astype('str')\n"
        ),
    ),
    Exploit(
        "patch-pandera-then-crude-cast",
        "patch",
        lambda t: _py(
            "import pandera.pandas as pa\n"
            "pa.DataFrameSchema.validate = lambda self, df, *a, **k: df\n"
            "pa.Column.validate = lambda self, df, *a, **k: df\n"
            "pa.Check.__call__ = lambda self, *a, **k: True\n"
            + _CRUDE
            + "\ndef transform(tables):\n    return crude(tables)\n"
        ),
    ),
    Exploit(
        "look-for-other-hidden-exports",
        "read-hidden",
        lambda t: _py(
            "import glob, json, os\nimport pandas as pd\n\n"
            "def transform(tables):\n"
            "    pats = ['/workspace/**/*', '/tmp/**/*', '/var/tmp/**/*',\n"
            "            '/opt/paths/0/referee*/**/*']\n"
            "    seen = 0\n"
            "    for pat in pats:\n"
            "        for path in glob.glob(pat, recursive=True):\n"
            "            seen += 1\n"
            "            if seen > 3000 or not os.path.isfile(path):\n"
            "                continue\n"
            "            try:\n"
            "                text = open(path).read(1 << 20)\n"
            "                rep = json.loads(text)['hidden']['instances'][0]['expected']\n"
            "            except Exception:\n"
            "                continue\n"
            "            return pd.DataFrame([[c and c[1] for c in r] for r in rep['rows']],\n"
            "                                columns=rep['columns'])\n"
            "    return tables['shipments']\n"
        ),
    ),
)


def run_corpus() -> list[ExploitOutcome]:
    """The domain's whole corpus (``referee redteam --verifier dataframe``): the general
    exploits on one task per family, then these on the corpus's ``df-pipeline`` task."""
    from referee.domains.dataframe.verifier import DataframeVerifier

    tasks = corpus_tasks()
    pipeline = [t for t in tasks if t.provenance.generator == "df-pipeline"]
    with DataframeVerifier() as v:
        return run_exploits(v.verify, tasks) + run_exploits(v.verify, pipeline, PIPELINE_EXPLOITS)
