"""003 Chapter 3's Observations 3.1–3.7 and §6.3.2.2's loaded cluster as shape tests on the stream engine.

The criteria are the reproduction's (:mod:`dlbkit.face.reproduce.nezha_observations`, stated there before
the first run); each test runs the rows of ``dlbkit reproduce nezha`` that check one observation.
Where our run misses the seed's shape, the test is a strict xfail naming the miss: it fails the day
the shape appears (then turn it into a plain assertion).
"""

import numpy as np
import pytest

from dlbkit.families.stream.balancers import Nezha, RoundRobinPlacement
from dlbkit.families.stream.model.workload import Demand
from dlbkit.face.reproduce import nezha_observations as obs

# its module fixtures (the reduced reproduction) are made once: every test of the module on one xdist worker
pytestmark = pytest.mark.xdist_group("nezha_observations")


@pytest.fixture(scope="module")
def grid():
    return obs.observation_grid()


@pytest.fixture(scope="module")
def conv():
    return obs.convergence_grid()


def verdicts(rows):
    return [r.ok for r in rows if r.asserted]


# --- §6.3.2.2 -----------------------------------------------------------------------------------------------

def test_loaded_cluster_round_robin_by_hand():
    """Round-robin from node1: one task per node; under processor sharing with the background lasting
    the run a 5-task node gives each 4/5 of a CPU (2700 · 5/4 = 3375 s) and node3's 7 tasks 4/7 (4725 s);
    average (7 · 3375 + 4725) / 8 = 3543.75 s."""
    nodes, t = obs.loaded_cluster(RoundRobinPlacement())
    assert nodes == list(range(8))
    assert t == pytest.approx([3375.0, 3375.0, 4725.0] + [3375.0] * 5, abs=1e-6)
    assert np.mean(t) == pytest.approx(3543.75, abs=1e-6)


def test_loaded_cluster_nezha_avoids_the_loaded_node():
    """Criteria: nothing on node3 in each of 200 seeds; round-robin exact; nezha's mean worst turnaround
    below round-robin's 4725 s."""
    rows = obs._loaded_cluster_claims()
    assert verdicts(rows) == [True, True, True]
    nodes, t = obs.loaded_cluster(Nezha(), 0)
    assert 2 not in nodes and max(t) < 4725.0


def test_loaded_cluster_background_that_ends_shortens_every_turnaround():
    """With background work exponential of mean 2700 (it ends during the run) no new task can take
    longer than with the background lasting the run: round-robin's worst ≤ 4725 s in every seed."""
    for s in range(5):
        _, t = obs.loaded_cluster(RoundRobinPlacement(), s, Demand("exponential", 2700.0))
        assert max(t) <= 4725.0 + 1e-6


# --- Observations ---------------------------------------------------------------------------------------------

def test_observation_3_1_improved_gives_shorter_queues(grid):
    """λ = 0.9, n = 8 16 32 64: nezha's mean, max and max-difference ≤ power-of-d's at every n, mean strictly."""
    assert verdicts(obs._observations_3_1_to_3_3(grid)[:1]) == [True]


def test_observation_3_2_size_sensitivity_at_half_load(grid):
    """λ = 0.5: nezha's mean queue range over n, relative to its mean, ≤ power-of-d's."""
    assert verdicts(obs._observations_3_1_to_3_3(grid)[1:2]) == [True]


@pytest.mark.xfail(strict=True, reason="honest miss: at λ = 0.8 and 0.9 nezha's mean queue varies more over n "
                   "(0.122, 0.124) than power-of-d's (0.086, 0.082), and both maxima fall with n instead of nezha's "
                   "staying within 1 task (6.67 → 3.67 at λ = 0.8)")
def test_observation_3_2_size_insensitivity_from_0_8(grid):
    """λ ∈ {0.8, 0.9}: nezha's relative range of the mean over n ≤ power-of-d's; nezha's max within 1 task
    over n while power-of-d's max grows with n."""
    assert all(verdicts(obs._observations_3_1_to_3_3(grid)[2:6]))


def test_observation_3_3_raising_the_rate_raises_queue_lengths(grid):
    """λ 0.5 → 0.8 → 0.9: mean strictly higher, max and max-difference not lower, both rules, every n."""
    assert verdicts(obs._observations_3_1_to_3_3(grid)[6:]) == [True]


def test_observation_3_4_origin_blind_rules_see_one_stream():
    """Our prediction (the seed found non-uniform rates better): both rules sample uniformly whatever the
    origin, so uniform 0.8625 and the seed's non-uniform rates give mean queues within ±5% (here the
    same draws: equal)."""
    for make in (obs._old, obs._improved):
        uni = obs._mean_over_seeds(8, 0.8625, make, 2)["mean"]
        non = obs._mean_over_seeds(8, obs.NONUNIFORM, make, 2)["mean"]
        assert abs(non / uni - 1) <= 0.05


@pytest.mark.full
@pytest.mark.xfail(strict=True, reason="honest miss: with gossiped loads (period 0.25, 1, 4 s) the mean queue at "
                   "n = 16, λ = 0.9 rises by up to 131% (power-of-d) and 179% (nezha), not within 15%")
def test_observation_3_5_insensitive_to_updating_latency():
    """Each rule's mean queue within ±15% of its exact-information value at every gossip period."""
    rows = obs._observation_3_5(readings=("gossip",))
    assert all(verdicts(rows[:2]))


@pytest.fixture(scope="module")
def monitored_rows():
    return obs._observation_3_5(readings=("monitored",))


@pytest.mark.full
@pytest.mark.xfail(strict=True, reason="honest miss: with the seed's own model of the latency (the monitored copy "
                   "seen 0.25, 1, 4 s late) the mean queue at n = 16, λ = 0.9 rises by up to 55% (power-of-d) and "
                   "86% (nezha); within 8% only at 0.25 s")
def test_observation_3_5_on_the_monitored_copy_insensitive_to_the_lag(monitored_rows):
    """The seed's reading (003 §3.4's lagged monitored array): each rule within ±15% of exact at every lag."""
    assert all(verdicts(monitored_rows[:2]))


@pytest.mark.full
def test_observation_3_5_on_the_monitored_copy_rows(monitored_rows):
    """Three rows; at the shortest lag (0.25 s) both rules are within 8% of exact (measured 7.5% and 8.0%:
    the miss is the longer lags'); the mean queue grows with the lag; at 4 s the old rule is at most the
    improved one (the criterion of the gossip reading, met)."""
    assert len(monitored_rows) == 3 and all(r.asserted for r in monitored_rows)
    for r in monitored_rows[:2]:
        base, *lagged = (float(x) for x in r.ours.split(" (")[0].split())
        assert abs(lagged[0] / base - 1) <= 0.085
        assert base < lagged[0] < lagged[1] < lagged[2]
    assert monitored_rows[2].ok is True


def test_observation_3_6_improved_converges_faster_and_the_old_slows_with_k_and_small_n(conv):
    """Convergence (max − min ≤ 3) from k ∈ {1, 2, 4} queues of 40 at λ = 0.4, n ∈ {8, 16, 32}: nezha ≤
    power-of-d everywhere; power-of-d strictly slower with k at n = 8 and strictly faster with n at k = 4."""
    rows = obs._observation_3_6(conv)
    assert [rows[0].ok, rows[2].ok] == [True, True]


@pytest.mark.xfail(strict=True, reason="honest miss by 0.4%: nezha's convergence times span 36.7–40.6 s, a ratio of "
                   "1.104 against the criterion's 1.10 (n = 8, k = 4: the other nodes at load 0.8 build queues)")
def test_observation_3_6_improved_converges_at_one_speed(conv):
    """Nezha's largest over smallest convergence time over the nine (n, k) ≤ 1.10."""
    assert obs._observation_3_6(conv)[1].ok


def test_convergence_old_drains_at_one_minus_lambda_k_over_n(conv):
    """The reason of Observation 3.6, quantitatively: power-of-d's over-loaded queue receives (k/n)² of
    λn arrivals shared by k queues, so it drains at 1 − λk/n; nezha's at 1. At n = 8, k = 4 (λ = 0.4)
    the ratio of their times is predicted 1/0.8 = 1.25; accept 1.05–1.35 (the rest of the cluster and
    the threshold of 3 blur it)."""
    ratio = conv["old", 8, 4] / conv["improved", 8, 4]
    assert 1.05 <= ratio <= 1.35


@pytest.mark.full
@pytest.mark.xfail(strict=True, reason="honest miss: nezha with d = 1 has mean queue 3.60 at n = 32, λ = 0.9, 1.35 × "
                   "power-of-d's 2.67 (criterion 1.10 ×); it is below half of random placement's 8.14")
def test_observation_3_7_adaptive_threshold_lifts_d_1_to_the_d_2_level():
    """Nezha d = 1 ≤ 1.10 × power-of-d d = 2 and ≤ 0.5 × random placement, n = 32, λ = 0.9."""
    assert obs._observation_3_7()[0].ok
