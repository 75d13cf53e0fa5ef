"""Several hosts without starting any (issue 39): what is refused before joining, the collectives' device groups
and which cross a process boundary, the mesh label, and jit-loop's host callback on a mesh (4 simulated CPU
devices, tests/conftest.py). The two-process runs are in test_two_processes.py."""

from __future__ import annotations

import io
from types import SimpleNamespace

import numpy as np
import pytest

from app.cli import main
from app.core.errors import InvalidSettingsError
from app.core.parallel.groups import processes_of, replica_groups
from app.core.parallel.hosts import check_modes_across_processes
from app.core.parallel.join import check_join
from app.core.parallel.mesh import Collective, MeshSpec, format_collectives, parse_mesh

JOIN = ["--coordinator", "127.0.0.1:1", "--num-processes", "2", "--process-id", "0"]


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), out, err)
    return status, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("text, groups", [
    ("all-reduce(x), channel_id=1, replica_groups={{0,1},{2,3}}, use_global_device_ids=true", [[0, 1], [2, 3]]),
    ("all-reduce(x), replica_groups=[2,2]<=[4], to_apply=%add", [[0, 1], [2, 3]]),
    ("all-gather(x), replica_groups=[2,2]<=[2,2]T(1,0), dimensions={0}", [[0, 2], [1, 3]]),
    ("all-reduce(x), channel_id=2, replica_groups=mesh['tp'=2] {'tp'}, use_global_device_ids=true", [[0, 1]]),
    ("all-reduce(x), replica_groups=mesh['a'=2,'b'=2] {'a'}, use_global_device_ids=true", [[0, 2], [1, 3]]),
    ("all-reduce(x), replica_groups={}, to_apply=%add", []),
    ("collective-permute(x), channel_id=3, source_target_pairs={{0,1},{1,0}}", [[0, 1], [1, 0]]),
    ("all-reduce(x), replica_groups=mesh['a'=4] {'a':(1)2}, x", None),  # a sub-axis: not read
    ("add(x, y)", None),
])
def test_replica_groups_in_each_form_xla_prints(text, groups):
    assert replica_groups(text) == groups


def test_which_collectives_cross_a_process_boundary():
    two_hosts = [0, 0, 1, 1]  # devices 0, 1 on process 0; 2, 3 on process 1
    assert processes_of([[0, 1], [2, 3]], two_hosts) == (0,)  # each group within one process
    assert processes_of([[0, 2], [1, 3]], two_hosts) == (0, 1)
    assert processes_of([], two_hosts) == (0, 1)  # one group of every device
    assert processes_of(None, two_hosts) is None and processes_of([[0, 7]], two_hosts) is None


def _fake_mesh(processes: list[int]):
    devices = np.array([SimpleNamespace(platform="cpu", id=2048 * p + i, process_index=p)
                        for i, p in enumerate(processes)], dtype=object)
    return SimpleNamespace(devices=devices, axis_names=("tp",))


def test_the_collectives_view_marks_the_ones_crossing_processes():
    found = [Collective("all-reduce", "ar", "f32[1,1,64]", "jit(step)", "modeling_llama.py:269 (forward)", 10, (0, 1)),
             Collective("all-gather", "ag", "f32[64]", "jit(step)", "", 12, (0,)),
             Collective("all-to-all", "aa", "f32[8]", "jit(step)", "", 14, None)]
    text = format_collectives(found, _fake_mesh([0, 0, 1, 1])).splitlines()
    assert text[0] == ("3 collectives on 4 devices of 2 processes (cpu:0@0, cpu:1@0, cpu:2050@1, cpu:2051@1): "
                       "1 cross a process boundary")
    assert "across processes 0,1" in text[1] and text[1].endswith("modeling_llama.py:269 (forward)")
    assert "within one process" in text[2] and "processes ?" in text[3]
    one_host = format_collectives(found[:1], _fake_mesh([0, 0])).splitlines()  # as before issue 39
    assert one_host == ["1 collectives", "all-reduce         f32[1,1,64]      line 10     modeling_llama.py:269 (forward)"]


def test_the_mesh_label_names_the_processes():
    assert str(parse_mesh("tp=2")) == "tp=2"
    assert str(MeshSpec((("tp", 2),), processes=2)) == "tp=2 across 2 processes"


def test_impossible_joins_are_refused_before_anything_starts():
    with pytest.raises(InvalidSettingsError, match=r"--process-id 2 is out of range: .* ids are 0 … 1"):
        check_join("127.0.0.1:1234", 2, 2, 10)
    with pytest.raises(InvalidSettingsError, match="--process-id -1 is out of range"):
        check_join("127.0.0.1:1234", 2, -1, 10)
    with pytest.raises(InvalidSettingsError, match="HOST:PORT"):
        check_join("127.0.0.1", 2, 0, 10)
    with pytest.raises(InvalidSettingsError, match="--distributed-timeout must be positive"):
        check_join("127.0.0.1:1234", 2, 0, 0)
    with pytest.raises(InvalidSettingsError, match=r"Mode 'torchax-eager' cannot run across 2 processes .*: use "
                                                   r"jit-dynamic or jit-static or jit-loop"):
        check_modes_across_processes(["jit-static", "torchax-eager"], 2)
    check_modes_across_processes(["torch"], 1)  # one process: anything goes


@pytest.mark.parametrize("argv, message", [
    (["generate", "--mode", "torch", "--mesh", "tp=2"], "error: Mode 'torch' cannot run across 2 processes"),
    (["race", "--modes", "jit-static", "torch-compile", "--mesh", "tp=2"], "error: Mode 'torch-compile' cannot run across"),
    (["generate"], "error: Across 2 processes give --mesh tp=N spanning every device of them"),
    (["inspect", "--what", "passes", "--mesh", "tp=2"], "error: inspect records XLA's pass pipeline"),
    (["passes", "--mesh", "tp=2"], "error: passes records XLA's pass pipeline"),
    (["generate", "--mesh", "tp=2", "--distributed-timeout", "-1"], "error: --distributed-timeout must be positive"),
])
def test_the_cli_refuses_what_cannot_run_across_processes_before_joining(argv, message):
    status, out, err = _cli(*argv, *JOIN)  # nobody listens at 127.0.0.1:1: refused before any wait
    assert status == 2 and out == "" and err.startswith(message) and len(err.splitlines()) == 1, err


def test_the_window_says_what_it_does_with_distributed():
    for argv in (["--distributed"], ["gui", "--distributed"]):
        status, out, err = _cli(*argv)
        assert status == 2 and len(err.splitlines()) == 1
        assert "the window runs on this host's devices only and never joins other processes" in err
        assert "--coordinator HOST:PORT --num-processes N --process-id I" in err


def test_jit_loop_callback_on_a_mesh_acts_once_per_process_and_per_iteration():
    """On 2 devices of this one process, the token callback inside the loop runs on both devices and acts on
    one; a Stop it returns ends the loop on both at the same iteration."""
    import jax
    import jax.numpy as jnp
    from jax.sharding import NamedSharding, PartitionSpec

    from app.core.parallel.host_calls import leader_indices, mesh_host_call
    from app.core.parallel.mesh import build_mesh
    from app.core.runtime.host_token import token_to_host

    mesh = build_mesh(parse_mesh("tp=2"))
    assert leader_indices(mesh) == frozenset({0})
    seen: list[tuple[int, int]] = []

    def channel(token, count):
        seen.append((int(token), int(count)))
        return np.asarray(int(count) == 4)  # Stop after the fifth iteration

    call = mesh_host_call(mesh, token_to_host)
    weights = jax.device_put(jnp.eye(4), NamedSharding(mesh, PartitionSpec("tp", None)))

    def loop(w, x):
        def body(carry):
            i, v, _ = carry
            v = w @ v + 1.0
            return i + 1, v, call(channel, v.sum().astype(jnp.int32), i)

        return jax.lax.while_loop(lambda c: jnp.logical_and(c[0] < 10, ~c[2]), body,
                                  (jnp.int32(0), x, jnp.bool_(False)))

    count, _, _ = jax.block_until_ready(jax.jit(loop)(weights, jnp.zeros(4)))
    assert int(count) == 5 and [c for _, c in seen] == [0, 1, 2, 3, 4]
    assert [t for t, _ in seen] == [4, 8, 12, 16, 20]
