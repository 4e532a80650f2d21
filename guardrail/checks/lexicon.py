"""The words and tokens the rule-based claim readers share (:mod:`guardrail.checks.claims`): a small English lexicon
(auxiliaries, negated auxiliaries, pronouns, determiners, prepositions, common verbs, yes/no words, wh-words, months),
a tokenizer and the helpers that join tokens back into a sentence.

No model, no parser: sets and regular expressions, read by the question-to-statement rules and by ``split_claims``.
"""

from __future__ import annotations

import re

TOKEN = re.compile(r"[A-Za-z0-9À-ÖØ-öø-ÿ$€£%]+(?:['’.,:/-][A-Za-z0-9À-ÖØ-öø-ÿ%]+)*|[^\sA-Za-z0-9]")

BE = {"is", "are", "was", "were", "am"}
MODAL = {"can", "could", "will", "would", "shall", "should", "may", "might", "must"}
DO = {"do", "does", "did"}
HAVE = {"has", "have", "had"}
AUX = BE | MODAL | DO | HAVE
NEG_AUX = {
    "isn't": "is", "aren't": "are", "wasn't": "was", "weren't": "were", "can't": "can", "cannot": "can",
    "couldn't": "could", "won't": "will", "wouldn't": "would", "shouldn't": "should", "mustn't": "must",
    "don't": "do", "doesn't": "does", "didn't": "did", "hasn't": "has", "haven't": "have", "hadn't": "had",
    "mightn't": "might", "shan't": "shall",
}
PRONOUNS = {"i", "you", "he", "she", "it", "we", "they", "this", "that", "these", "those", "there", "one",
            "someone", "anyone", "everyone", "something", "anything", "everything"}
#: how the asker's pronouns read as a statement about the context ("Can I return it?" -> "You can return it.")
PERSON = {"i": "you", "me": "you", "my": "your", "mine": "yours", "we": "you", "us": "you", "our": "your",
          "myself": "yourself", "ourselves": "yourselves"}
DETERMINERS = {"the", "a", "an", "this", "that", "these", "those", "my", "your", "our", "their", "his", "her", "its",
               "any", "some", "all", "every", "each", "no", "both", "either", "neither", "another", "such"}
PREPOSITIONS = {"in", "on", "at", "by", "for", "with", "from", "to", "into", "onto", "about", "over", "under",
                "after", "before", "during", "within", "without", "between", "among", "through", "than", "as",
                "like", "near", "since", "until", "via", "per", "against", "across", "behind", "beyond", "outside",
                "inside", "around", "up", "down", "off", "out"}
BOUNDARY_WORDS = {"be", "been", "being", "have", "not", "also", "still", "ever", "already", "really", "always",
                  "never", "only", "just", "now", "again", "more", "less", "very", "too", "so", "then"}
#: common base-form verbs: where the subject of "Does the warranty cover ...?" ends (not exhaustive; the fallback
#: takes a determiner and one word)
VERBS = set("""
accept add affect agree allow apply arrive ask assist attend become begin believe belong borrow break bring build
buy call cancel carry cause change charge check choose claim close come compete complete consider contain continue
cost count cover create cross cut deal decide deliver depend describe design destroy die discover do draw drink drive
earn eat employ end enjoy enter establish exist expect expire explain extend fail fall feel fight fill find finish
fit fly follow found get give go grow happen have hear help hit hold host include increase involve join keep kill
know last lead learn leave lend let lie like limit live lose love make marry matter mean meet move need offer open
operate own pay perform place plan play produce protect provide publish qualify reach read receive record reduce
refund release remain remember remove renew replace report represent require return run save say see sell send serve
set share ship show sign sing sit sleep speak spend stand start stay stop study succeed suffer support survive take
talk teach tell tend think travel treat try turn understand use vary visit vote wait walk want wear win work write
""".split())
YES = {"yes", "yeah", "yep", "yup", "sure", "correct", "right", "true", "indeed", "absolutely", "certainly",
       "definitely", "affirmative", "exactly", "yes,", "aye", "ok", "okay", "of course"}
NO = {"no", "nope", "nah", "incorrect", "false", "wrong", "negative", "never", "not really", "not at all", "not yet",
      "certainly not", "absolutely not", "definitely not", "of course not", "no way"}
MONTHS = {"january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec"}
WH = {"what", "which", "who", "whom", "whose", "when", "where", "how", "why"}


def tokenize(text: str) -> list[str]:
    """Words (with inner apostrophes, dots, hyphens: "isn't", "3.5", "e-mail"), amounts and single marks."""
    return TOKEN.findall(text.replace("’", "'"))


def join_tokens(tokens: list[str]) -> str:
    """Tokens back into text: no space before closing marks, "'s" and "n't", nor after "(", "[" and "$"."""
    out = ""
    for tok in tokens:
        if out and not re.fullmatch(r"[,.;:!?)\]]|'s|n't", tok) and not out.endswith(("(", "[", "$")):
            out += " "
        out += tok
    return out


def as_sentence(tokens: list[str]) -> str:
    """Tokens as a sentence: capitalised, ending in "." unless it ends in "." or "!" ("" for no tokens)."""
    text = join_tokens(tokens).strip(" ,;:")
    if not text:
        return ""
    text = text[0].upper() + text[1:]
    return text if text.endswith((".", "!")) else text + "."


def looks_verb(token: str) -> bool:
    """A known verb, a form of "be", an -ed/-es form or a common irregular past."""
    low = token.lower()
    return low in VERBS or low in BE or bool(re.fullmatch(r"[a-z]{3,}(ed|es)", low)) or (
        low.endswith("s") and low[:-1] in VERBS) or low in {"won", "wrote", "made", "built", "found", "led", "gave",
                                                           "took", "became", "began", "ran", "held", "sold", "had"}
