"""bench/floor_bound.py: the memory floor's bound on the speed-up over cuBLASLt, on hand-made
gpu_bench CSVs (the tool reads what a GPU run wrote; its arithmetic is checked here)."""

import importlib.util
import pathlib

import pytest

TOOL = pathlib.Path(__file__).resolve().parents[2] / "bench" / "floor_bound.py"
spec = importlib.util.spec_from_file_location("floor_bound", TOOL)
floor_bound = importlib.util.module_from_spec(spec)
spec.loader.exec_module(floor_bound)

HEADER = ("m,n,k,config,fp8dot_ms,direct_ms,graph_ms,direct_graph_ms,launches,"
          "direct_m_unpadded_ms,direct_with_padding_ms,note\n")


def write_csv(path, rows):
    path.write_text(HEADER + "".join(row + "\n" for row in rows))
    return path


def test_bound_share_and_verdict_per_row(tmp_path):
    csv = write_csv(tmp_path / "run.csv", [
        "64,4096,7168,memory floor,,,0.010000,,1,,,",
        "64,4096,7168,1x128 x 128x128 own,0.013,0.016,0.012000,0.015000,1,nan,nan, [64x32]",
        "128,24576,1536,memory floor,,,0.012000,,1,,,",
        "128,24576,1536,1x128 x 128x128 own,0.016,0.015,0.016000,0.015000,1,nan,nan, [128x128]",
        # No graph times above M = 128: not a row of the table.
        "4096,4096,4096,1x128 x 128x128 own,0.110,0.111,nan,nan,1,nan,nan, [256x128]",
    ])
    lines = floor_bound.bound_table([csv]).splitlines()
    # own / cuBLASLt 0.015/0.012, bound 0.015/0.010, own at 0.010/0.012 of the floor's speed.
    assert "| 64,4096,7168 | 1x128 x 128x128 own | 1.250 | 1.500 | 83% | yes |" in lines
    assert "| 128,24576,1536 | 1x128 x 128x128 own | 0.938 | 1.250 | 75% | **no** |" in lines
    assert not any(line.startswith("| 4096,") for line in lines)
    assert lines[-1].startswith("1 of 2 rows cannot reach 1.3x")


def test_rounds_give_medians_and_the_target_is_a_parameter(tmp_path):
    rounds = [write_csv(tmp_path / f"round{i}.csv", [
        "64,2112,7168,memory floor,,,0.006000,,1,,,",
        f"64,2112,7168,fp8 promoted own vs fast,1,1,{own:.6f},0.012000,1,nan,nan,",
    ]) for i, own in enumerate((0.010, 0.008, 0.009))]
    lines = floor_bound.bound_table(rounds, target=2.5).splitlines()
    assert "| 64,2112,7168 | fp8 promoted own vs fast | 1.333 | 2.000 | 67% | **no** |" in lines
    assert "| 64,2112,7168 | fp8 promoted own vs fast | 1.333 | 2.000 | 67% | yes |" in \
        floor_bound.bound_table(rounds, target=2.0).splitlines()


def test_a_row_without_its_floor_says_so_and_no_rows_is_an_error(tmp_path):
    csv = write_csv(tmp_path / "run.csv", [
        "64,2112,7168,1x128 x 128x128 own,1,1,0.010000,0.012000,1,nan,nan,",
    ])
    assert "| 64,2112,7168 | 1x128 x 128x128 own | 1.200 | no floor row | | |" in \
        floor_bound.bound_table([csv]).splitlines()
    empty = write_csv(tmp_path / "empty.csv", [])
    with pytest.raises(ValueError, match="no rows with graph times"):
        floor_bound.bound_table([empty])
    with pytest.raises(ValueError, match="no rows"):
        floor_bound.bound_table([csv], config="bf16")
