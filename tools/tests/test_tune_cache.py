"""T5's tuned-config cache on disk (given/t5_config.py, T5_AUTOTUNE=1): the ranks of one job tune side
by side and write the same file, so a write keeps what others wrote and never breaks theirs."""

import json
import threading

from given.t5_config import Config, read_tuned, save_tuned


def test_a_write_keeps_what_another_process_wrote(tmp_path):
    path = str(tmp_path / "cache" / "tuned.json")
    save_tuned(path, {"a": Config(64, 128)})
    save_tuned(path, {"b": Config(128, 256)})  # a second process, which read the file before "a" was there
    assert read_tuned(path) == {"a": Config(64, 128), "b": Config(128, 256)}


def test_writers_at_once_neither_fail_nor_leave_half_a_file(tmp_path):
    """Eight writers, 40 writes each: with one temporary name shared by all, a rename finds the file
    already renamed by another writer (FileNotFoundError) or a reader meets half a file."""
    path = str(tmp_path / "tuned.json")
    errors = []

    def writer(n):
        try:
            for i in range(40):
                save_tuned(path, {f"w{n}-{i}": Config(64, 64 * (1 + i % 4))})
                json.load(open(path))  # whole JSON at every moment
        except Exception as e:  # noqa: BLE001 - any failure of a writer is the finding
            errors.append(repr(e))

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:3]
    got = read_tuned(path)
    assert got and all(isinstance(c, Config) for c in got.values())
    assert not list(tmp_path.glob("*.tmp")), "a temporary file was left behind"
