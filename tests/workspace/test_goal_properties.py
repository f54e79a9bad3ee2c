"""Property: after any sequence of goal updates, the tree's invariants hold."""

from __future__ import annotations

import asyncio

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mindspace import ManualClock, Settings
from mindspace.offline import OfflineLLM
from mindspace.storage import SqlStore
from mindspace.testing.assistants import assistant_on
from mindspace.workspace import Goal

# A tree as a list of parent indexes: parents[i] is None (a root) or an earlier index.
trees = st.integers(min_value=1, max_value=10).flatmap(
    lambda n: st.tuples(
        *[
            st.none() | st.integers(min_value=0, max_value=i - 1) if i else st.none()
            for i in range(n)
        ]
    )
)
updates = st.lists(
    st.tuples(
        st.integers(min_value=0, max_value=9),
        st.sampled_from([None, "active", "completed", "abandoned"]),
        st.none() | st.floats(min_value=-20, max_value=120, allow_nan=False),
    ),
    max_size=25,
)


def check_invariants(goals: list[Goal]) -> None:
    by_id = {g.id: g for g in goals}
    for goal in goals:
        assert 0 <= goal.progress <= 100
        if not goal.subtask_ids:
            continue
        subtasks = [by_id[i] for i in goal.subtask_ids]
        mean = sum(s.progress for s in subtasks) / len(subtasks)
        assert goal.progress == round(mean, 2), goal.id
        all_done = all(s.status == "completed" for s in subtasks)
        assert (goal.status == "completed") == all_done, goal.id


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(parents=trees, steps=updates)
def test_rollup_invariants_hold_after_any_updates(
    parents: tuple[int | None, ...], steps: list[tuple[int, str | None, float | None]]
) -> None:
    async def scenario() -> None:
        store = SqlStore("sqlite://")
        assistant = assistant_on(
            store, "prop", llm=OfflineLLM(announce=False), clock=ManualClock(), settings=Settings()
        )
        ids: list[str] = []
        for parent in parents:
            args: dict[str, object] = {"description": f"goal {len(ids)}"}
            if parent is not None:
                args["parent_id"] = ids[parent]
            result = await assistant.call_tool("add_goal", args)
            ids.append(result["goal_id"])
            check_invariants(assistant.views.goals().all())
        for index, status, progress in steps:
            args = {"goal_id": ids[index % len(ids)]}
            if status is not None:
                args["status"] = status
            if progress is not None:
                args["progress"] = progress
            result = await assistant.call_tool("update_goal", args)
            if progress is not None and not 0 <= progress <= 100:
                assert result["success"] is False
            check_invariants(assistant.views.goals().all())
        store.close()

    asyncio.run(scenario())
