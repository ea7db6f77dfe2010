import difflib

from queerbias.suites.pairs.alignment import measures_something, scored_positions, shared_positions


def test_shared_positions_follow_difflib_equal_blocks():
    a = [101, 7, 8, 9, 10, 102]
    b = [101, 7, 11, 12, 9, 10, 102]
    assert shared_positions(a, b) == ([0, 1, 3, 4, 5], [0, 1, 4, 5, 6])


def test_masked_shared_scope_drops_first_and_last_aligned():
    a = [101, 7, 8, 9, 102]
    b = [101, 7, 5, 9, 102]
    assert scored_positions(a, b, "masked", "shared", [1, 2, 3], [1, 2, 3]) == ([1, 3], [1, 3])


def test_causal_shared_scope_drops_only_the_first_aligned():
    a = [1, 7, 8, 9]
    b = [1, 7, 5, 9]
    assert scored_positions(a, b, "causal", "shared", [1, 2, 3], [1, 2, 3]) == ([1, 3], [1, 3])


def test_differing_and_all_scopes():
    a = [1, 7, 8, 9]
    b = [1, 7, 5, 6, 9]
    assert scored_positions(a, b, "causal", "differing", [1, 2, 3], [1, 2, 3, 4]) == ([2], [2, 3])
    assert scored_positions(a, b, "causal", "all", [1, 2, 3], [1, 2, 3, 4]) == ([1, 2, 3], [1, 2, 3, 4])


def test_alignment_is_order_sensitive_like_difflib():
    # SequenceMatcher is not symmetric in general; we must call it in the reference's order.
    a, b = [1, 2, 3, 2, 1], [2, 1, 2, 3]
    m = difflib.SequenceMatcher(None, [str(x) for x in a], [str(x) for x in b])
    expected = [i for tag, i1, i2, _, _ in m.get_opcodes() if tag == "equal" for i in range(i1, i2)]
    assert shared_positions(a, b)[0] == expected


def test_two_scores_can_differ_only_where_the_model_sees_different_inputs():
    a, b = [1, 7, 8, 9], [1, 7, 8, 5]  # the identity word last, as in most pairs
    # a causal LM's position sees the tokens up to it: under shared-token scoring both sentences score
    # the same prefixes, so their scores are equal by construction; a masked LM sees every token
    assert not measures_something(a, [1, 2], b, [1, 2], "causal")
    assert measures_something(a, [1, 2], b, [1, 2], "masked")
    assert measures_something(a, [1, 3], b, [1, 3], "causal")  # position 3 reads the differing token
    assert not measures_something(a, [1, 2], a, [1, 2], "masked")  # one sentence twice
    assert measures_something(a, [1], a, [2], "masked")  # the same sentence, other positions
    # nothing scored on either side measures nothing; one side scored does
    assert not measures_something(a, [], b, [], "masked") and not measures_something(a, [], b, [], "causal")
    assert measures_something(a, [1], b, [], "causal") and measures_something(a, [], b, [1], "masked")
