"""The program that runs an imported world's tools inside the sandbox (its source is sent to
the sandbox as text; nothing here runs on the host).

``python runner.py describe``: writes ``out.json``, the tools' schemas read from the module's
``TOOLS`` (functions ``tool(db, **arguments)`` with annotated parameters and a docstring).
``python runner.py call``: reads ``calls.json`` (a list of ``{"name", "arguments"}`` or null),
runs each call against ``state.db`` in its own transaction, writes ``out.json`` (one result per
call: ``ok``, ``result`` or ``error``, ``violations``). The module may raise any exception (its
message is the error the agent sees) and call ``violation("policy")``, given to it, to log a
policy violation of the call being made.
"""

RUNNER_SOURCE = r"""
import inspect, json, sqlite3, sys, typing

_pending = []

class ToolError(Exception):
    pass

def violation(policy):
    _pending.append(str(policy)[:100])

ns = {"__name__": "world", "ToolError": ToolError, "violation": violation}
exec(compile(open("world.py").read(), "world.py", "exec"), ns)
tools = {f.__name__: f for f in ns.get("TOOLS", []) if callable(f)}
_TYPES = {int: "integer", str: "string", float: "number", bool: "boolean"}

def _type(t):
    origin = typing.get_origin(t)
    if t in _TYPES:
        return {"type": _TYPES[t]}
    if origin is list:
        inner = (typing.get_args(t) or (str,))[0]
        return {"type": "array", "items": {"type": _TYPES.get(inner, "string")}}
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        rest = [a for a in typing.get_args(t) if a is not type(None)]
        return _type(rest[0]) if rest else {"type": "string"}
    return {"type": "string"}

def describe():
    out = []
    for name, f in tools.items():
        hints = typing.get_type_hints(f)
        params = list(inspect.signature(f).parameters.values())[1:]
        props = {p.name: _type(hints.get(p.name, str)) for p in params}
        required = [p.name for p in params if p.default is inspect.Parameter.empty]
        out.append({"name": name, "description": (f.__doc__ or "").strip()[:500],
                    "properties": props, "required": required})
    return out

def call(items):
    db = sqlite3.connect("state.db")
    # A scratch copy for one episode: no syncs to disk (the costly part). The rollback journal
    # stays on disk, so a run killed mid-call (past its time) leaves the store as it was.
    db.execute("PRAGMA synchronous = OFF")
    out = []
    for item in items:
        if item is None:
            out.append(None)
            continue
        del _pending[:]
        try:
            with db:
                result = tools[item["name"]](db, **item["arguments"])
            json.dumps(result)
            out.append({"ok": True, "result": result, "violations": list(_pending)})
        except Exception as e:
            out.append({"ok": False, "error": (type(e).__name__ + ": " + str(e))[:500],
                        "violations": list(_pending)})
    db.close()
    return out

mode = sys.argv[1]
result = describe() if mode == "describe" else call(json.load(open("calls.json")))
with open("out.json", "w") as f:
    json.dump(result, f)
"""
