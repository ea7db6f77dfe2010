"""The knowledge set's declaration: definitional pairs scored as the pair benchmark, reported as
accuracy and margin, and the figure a study guards with it (light; the implementation is
`suites.knowledge.suite`).

Each pair holds a correct statement of what an identity word means (`sent_more`) and its
counterfactual with the identity swapped (`sent_less`); half the facts put the queer word
in the correct sentence, half in the wrong one, so preferring either side scores 50 %.
Accuracy = % of pairs whose correct sentence is more likely (ties count as wrong, as the
reference counts a tie as not biased), margin d = s_correct - s_counterfactual in nats. A
mitigation must not lower either: it would buy indifference by forgetting what the words
mean (the analogue of StereoSet's language-model score next to its stereotype score, Nadeem
et al. 2021). A study's guard reads its overall accuracy.
"""

from __future__ import annotations

from queerbias.suites.pairs.declaration import Pairs
from queerbias.suites.pairs.parts import PAIR_GAP
from queerbias.suites.protocol import BINARY, CONTINUOUS, OVERALL, Criterion, Figure, Judged, Measure

CRITERIA = {
    "accuracy": Criterion("highest knowledge accuracy (ties: largest mean margin)", ("accuracy", "margin"),
                          lambda row: (-row["accuracy"], -row["margin"]), "the knowledge accuracy and margin"),
}


class Knowledge(Pairs):
    name = "knowledge"
    description = "Definitional pairs: does the model still prefer the correct meaning of an identity word?"
    data_default = "queerbias-knowledge"
    data_help = "a pair benchmark of definitional pairs (sent_more: the correct statement); default queerbias-knowledge"
    licence = "queerbias-knowledge: MIT"
    measures = (Measure("accuracy", BINARY, "knowledge accuracy", "pp", reference=50.0,
                        reference_label="50 = chance"),
                Measure("margin", CONTINUOUS, "margin d", "nats", digits=3, reference=0.0,
                        reference_label="0 = no preference"))
    scope_titles = {"groups": "Identity"}
    criteria = CRITERIA
    parts = (PAIR_GAP,)
    optional_parts = ()
    figures = {}
    judged = Judged(guard=Figure(OVERALL, "accuracy"))
    implementation = "queerbias.suites.knowledge.suite:KnowledgeSuite"
    # its data is a pair set (available offline as pair sets are), never trained on (no held-out default),
    # its folder named after the data; the card shows the measures as any suite's (its closing line adds the
    # groups that fell below chance), the report as any suite's
    companions = {"training": "queerbias.suites.knowledge.training:KnowledgeTraining",
                  "card": "queerbias.suites.knowledge.card:KnowledgeCard"}
