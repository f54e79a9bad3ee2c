"""The table ``mindspace sleep --run`` prints: what each sleep operation did over the night."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rich import box
from rich.table import Table
from rich.text import Text

from mindspace.engine import SleepTickResult
from mindspace.hosts.cli.common import counted

__all__ = ["night_table"]


def night_table(results: Sequence[SleepTickResult]) -> Table:
    """What each operation did over the ticks, in the order the sleep tick runs them."""
    ops: dict[str, list[Mapping[str, Any]]] = {}
    for result in results:
        for name, op in result.operations.items():
            ops.setdefault(name, []).append(op)
    dreamt = "run_dreaming_tick" in ops
    table = Table(
        title=f"The night: {counted(len(results), 'sleep tick', 'sleep ticks')}",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        show_edge=False,
    )
    table.add_column("Operation", no_wrap=True)
    table.add_column("Ticks", justify="right", no_wrap=True)
    table.add_column("What it did", overflow="fold")
    for name, label, describe in _OPERATIONS:
        runs = ops.get(name, [])
        if runs:
            what = describe(runs)
        elif name in _COMPACTING_OPS or dreamt:
            what = Text("did not run", style="dim")
        else:
            what = Text("not reached (dreaming comes after compacting)", style="dim")
        cell = Text(label)
        cell.append(f"\n{name}", style="dim")
        table.add_row(cell, str(len(runs)), what)
    return table


def _sum(runs: Sequence[Mapping[str, Any]], key: str) -> int:
    return sum(int(op.get(key) or 0) for op in runs)


def _lengths(runs: Sequence[Mapping[str, Any]], key: str) -> int:
    return sum(len(op.get(key) or ()) for op in runs)


def _errors(runs: Sequence[Mapping[str, Any]], key: str = "error") -> list[str]:
    found: list[str] = []
    for op in runs:
        value = op.get(key)
        if isinstance(value, str) and value:
            found.append(value)
        elif isinstance(value, list):
            found.extend(str(v) for v in value)
        elif isinstance(value, dict):
            found.extend(f"{k}: {v}" for k, v in value.items())
    return found


def _with_errors(text: str, errors: Sequence[str]) -> Text:
    out = Text(text)
    if errors:
        out.append(f"\n{counted(len(errors), 'error', 'errors')}, last: {errors[-1]}", style="red")
    return out


def _describe_scoring(runs: Sequence[Mapping[str, Any]]) -> Text:
    # Only answers the model really gave count as scored by the LLM; a fallback keeps
    # the heuristic score and is reported as such.
    reports = [s for op in runs for s in op.get("scored") or () if isinstance(s, Mapping)]
    by_llm = [s for s in reports if s.get("importance_method") in ("llm", "offline")]
    repaired = sum(1 for s in by_llm if s.get("structured") == "repaired")
    kept = len(reports) - len(by_llm)
    text = f"{counted(len(by_llm), 'entry', 'entries')} scored by the LLM"
    if repaired:
        text += f" ({repaired} after a repair)"
    if kept:
        text += f", {kept} kept the heuristic score (no usable answer)"
    text += f", {runs[-1].get('remaining', 0)} left unscored"
    return _with_errors(text, _errors(runs))


def _describe_consolidation(runs: Sequence[Mapping[str, Any]]) -> Text:
    # How the facts were extracted: by the model in the sleep_consolidate context, or by
    # the rules (for entries it gave no fact for, or when it failed).
    by_model = _sum(runs, "processed") - _lengths(runs, "by_rules")
    rejected = _lengths(runs, "rejected")
    how = f"; facts from {by_model} by the model, {_lengths(runs, 'by_rules')} by rule"
    if rejected:
        how += f", {counted(rejected, 'self-reference', 'self-references')} rejected"
    return Text(
        f"{counted(_sum(runs, 'processed'), 'entry', 'entries')} consolidated into "
        f"{counted(_lengths(runs, 'memory_ids'), 'memory', 'memories')}, "
        f"{runs[-1].get('remaining', 0)} left"
        + (" (phase complete)" if runs[-1].get("completed") else "")
        + how
    )


def _describe_mining(runs: Sequence[Mapping[str, Any]]) -> Text:
    # What people said, mined for facts whether or not the model used its tools by day.
    stored = _sum(runs, "facts_stored")
    text = (
        f"{counted(_sum(runs, 'messages'), 'message', 'messages')} mined in "
        f"{counted(_sum(runs, 'requests'), 'request', 'requests')}: "
        f"{counted(stored, 'fact', 'facts')} stored as memories, "
        f"{_lengths(runs, 'duplicates')} already known, {_lengths(runs, 'rejected')} refused"
        f", {runs[-1].get('remaining', 0)} messages left"
    )
    return _with_errors(text, [*_errors(runs, "problems"), *_errors(runs)])


def _describe_links(runs: Sequence[Mapping[str, Any]]) -> Text:
    return Text(
        f"{counted(_sum(runs, 'processed'), 'memory', 'memories')} linked, "
        f"{counted(_sum(runs, 'links_created'), 'link', 'links')} created, "
        f"{runs[-1].get('remaining', 0)} left"
    )


def _describe_orphans(runs: Sequence[Mapping[str, Any]]) -> Text:
    return Text(
        f"{counted(_sum(runs, 'removed_links'), 'orphaned link', 'orphaned links')} removed "
        f"({counted(_sum(runs, 'removed_records'), 'record', 'records')} of deleted memories)"
    )


def _describe_entities(runs: Sequence[Mapping[str, Any]]) -> Text:
    updated: dict[str, set[str]] = {}
    for op in runs:
        for entity, attributes in (op.get("entities") or {}).items():
            updated.setdefault(str(entity), set()).update(attributes)
    count = sum(len(keys) for keys in updated.values())
    text = f"{counted(count, 'attribute', 'attributes')} updated on "
    text += f"{counted(len(updated), 'entity', 'entities')}"
    if updated:
        text += ": " + ", ".join(sorted(updated))
    rejected = _lengths(runs, "rejected_attributes")
    if rejected:
        text += f"; {rejected} rejected by the persona guard"
    skipped = _errors(runs, "skipped")
    if skipped:
        # A fallback, not a failure: the observations wait for a later tick.
        text += f"; {counted(len(skipped), 'entity', 'entities')} skipped (no usable answer), "
        text += f"last: {skipped[-1]}"
    return _with_errors(text, _errors(runs, "errors"))


def _describe_reflection(runs: Sequence[Mapping[str, Any]]) -> Text:
    done = [op for op in runs if op.get("success")]
    if not done and not any(op.get("triggered", True) for op in runs):
        return Text("not due (importance below the threshold)")
    insights = _lengths(done, "insights")
    text = (
        f"{counted(len(done), 'reflection', 'reflections')}, "
        f"{counted(insights, 'insight', 'insights')} stored"
    )
    skipped = _errors(runs, "skipped")
    if skipped:
        text += f"; {counted(len(skipped), 'time', 'times')} skipped, last: {skipped[-1]}"
    return _with_errors(text, _errors(runs))


def _describe_pruning(runs: Sequence[Mapping[str, Any]]) -> Text:
    return Text(f"{counted(_lengths(runs, 'pruned'), 'entry', 'entries')} pruned")


def _describe_conversations(runs: Sequence[Mapping[str, Any]]) -> Text:
    cleared = sorted({str(e) for op in runs for e in op.get("cleared") or ()})
    text = f"{counted(len(cleared), 'stale conversation', 'stale conversations')} cleared"
    return Text(text + (": " + ", ".join(cleared) if cleared else ""))


def _describe_extraction(runs: Sequence[Mapping[str, Any]]) -> Text:
    ran = [op for op in runs if op.get("ran")]
    if not ran:
        return Text(f"not needed ({runs[-1].get('reason', 'below threshold')})")
    threads = {str(t) for op in ran for t in op.get("threads") or {}}
    errors = [
        f"{t}: {v['error']}"
        for op in ran
        for t, v in (op.get("threads") or {}).items()
        if isinstance(v, dict) and v.get("error")
    ]
    return _with_errors(
        f"ran {counted(len(ran), 'time', 'times')} over "
        f"{counted(len(threads), 'conversation', 'conversations')}",
        errors,
    )


def _describe_compaction(runs: Sequence[Mapping[str, Any]]) -> Text:
    done = [op for op in runs if op.get("compacted")]
    if not done:
        last = runs[-1]
        return _with_errors(
            f"not needed (context at {last.get('usage_percentage', 0)}%, threshold "
            f"{last.get('threshold', '?')}%)",
            _errors(runs, "errors"),
        )
    removed = sum(
        int(thread.get("removed", 0))
        for op in done
        for thread in (op.get("threads") or {}).values()
    )
    return _with_errors(
        f"compacted {counted(len(done), 'time', 'times')}: "
        f"{counted(removed, 'message', 'messages')} summarized behind the marker",
        _errors(runs, "errors"),
    )


_Describe = Callable[[Sequence[Mapping[str, Any]]], Text]
_OPERATIONS: tuple[tuple[str, str, _Describe], ...] = (
    ("score_pending_entries", "Entries scored", _describe_scoring),
    ("run_sleep_consolidation", "Entries consolidated", _describe_consolidation),
    ("mine_conversations", "Conversations mined", _describe_mining),
    ("run_dreaming_tick", "Memory links", _describe_links),
    ("prune_orphaned_memory_links", "Orphaned links", _describe_orphans),
    ("run_entity_consolidation_batch", "Entity attributes", _describe_entities),
    ("run_reflection", "Reflections", _describe_reflection),
    ("prune_low_importance_entries", "Entries pruned", _describe_pruning),
    ("clear_stale_conversations", "Conversations cleared", _describe_conversations),
    ("run_pre_compaction_extraction", "Pre-compaction extraction", _describe_extraction),
    ("compact_conversation_history", "Compaction", _describe_compaction),
)
_COMPACTING_OPS = frozenset(
    {"score_pending_entries", "run_sleep_consolidation", "mine_conversations"}
)
