"""The tile arithmetic of GEMM, as plain Python: which tile a program computes (GROUP_M ordering,
§2 of T4's explainer).  The explainers' counts and the study tools' L2 simulator both print it."""

MIB = 2**20


def cdiv(a, b):
    return -(-a // b)


def coords(pid, num_pid_m, num_pid_n, group_m, modulo_group_m=False):
    """§2's arithmetic, one named value per line of tile_coords.  modulo_group_m: the mistake of
    using GROUP_M where the last, shorter group needs group_size_m."""
    v = {"pid": pid, "num_pid_in_group": group_m * num_pid_n}
    v["group_id"] = pid // v["num_pid_in_group"]
    v["first_pid_m"] = v["group_id"] * group_m
    v["group_size_m"] = min(num_pid_m - v["first_pid_m"], group_m)
    v["pid_in_group"] = pid % v["num_pid_in_group"]
    rows = group_m if modulo_group_m else v["group_size_m"]
    v["pid_m"] = v["first_pid_m"] + v["pid_in_group"] % rows
    v["pid_n"] = v["pid_in_group"] // rows
    return v
