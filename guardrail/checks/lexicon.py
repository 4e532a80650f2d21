"""The words and tokens the rule-based claim readers share (:mod:`guardrail.checks.claims`): a small English lexicon
(auxiliaries, negated auxiliaries, pronouns, determiners, prepositions, common verbs, yes/no words, wh-words, months),
the hedges, echo subjects and symbols a yes/no answer is read with, a tokenizer and the helpers that join tokens back
into a sentence.

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
raise score redeem terminate withdraw appeal deduct sublet reserve smoke swim
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
exclude permit prohibit restrict waive guarantee repair exchange upgrade downgrade transfer reimburse
weigh measure accrue exceed feature average range equal comprise lack
""".split())
#: words and phrases that answer yes or no ("of course not" is read before "of course": the longest one wins)
YES = {"yes", "yeah", "yep", "yup", "yea", "sure", "correct", "right", "true", "indeed", "absolutely", "certainly",
       "definitely", "affirmative", "exactly", "yes,", "aye", "ok", "okay", "of course", "for sure", "sure thing",
       "you bet", "you betcha", "totally", "by all means", "naturally", "probably", "alright", "all right",
       "no problem", "not a problem", "no worries", "no doubt", "without a doubt", "undoubtedly", "you got it",
       "that's right", "that is right", "that's correct", "that is correct", "that's true", "that is true",
       "i think so", "i believe so", "i guess so", "i'm afraid so", "i am afraid so", "yes indeed", "hell yes",
       "heck yes", "oh yes"}
NO = {"no", "nope", "nah", "nay", "incorrect", "false", "wrong", "negative", "never", "not really", "not at all",
      "not yet", "certainly not", "absolutely not", "definitely not", "of course not", "no way", "surely not",
      "probably not", "not", "not possible", "impossible", "no chance", "not a chance", "by no means", "no can do",
      "not exactly", "not quite", "not true", "not correct", "not right", "i don't think so", "i do not think so",
      "i don't believe so", "i do not believe so", "i think not", "i believe not", "i'm afraid not",
      "i am afraid not", "afraid not", "hell no", "heck no"}
#: phrases that say the answer is neither yes nor no ("Not sure.", "Maybe.", "Yes and no."): no yes/no reading
UNSURE = {"not sure", "not certain", "i'm not sure", "i am not sure", "im not sure", "not entirely sure",
          "not quite sure", "not really sure", "unsure", "maybe", "perhaps", "possibly", "it depends", "depends",
          "not necessarily", "not always", "sometimes", "yes and no", "hard to say", "unclear", "no idea", "dunno",
          "i don't know", "i do not know"}
#: yes/no words that are ordinary words too: they answer only before punctuation, the end or another part of an
#: answer ("No, ...", "No they can't", "Not."), not before a word they qualify ("No gift cards ...", "Not every item
#: ...", "Right now ...", "Exactly 30 days", "Not at all a problem", "No way to ...")
WEAK_ANSWER_WORDS = (NO - {"nope", "nah", "nay"}) | {
    "right", "true", "correct", "exactly", "ok", "okay", "alright", "all right", "probably", "naturally", "totally",
    "no problem", "not a problem", "no worries", "no doubt", "that's right", "that is right", "that's correct",
    "that is correct", "that's true", "that is true", "you got it"}
#: yes words that are mostly politeness: any other yes/no word in the answer decides ("Sure, no." is a no)
SOFT_YES = {"sure", "ok", "okay", "alright", "all right", "right", "no problem", "not a problem", "no worries",
            "probably"}
#: hedges, sentiment adverbs and greetings around a yes/no answer that say nothing about yes or no ("Unfortunately,
#: no.", "I'm afraid not.", "Good news: yes!", "No, sorry.")
HEDGES = {"unfortunately", "fortunately", "sadly", "happily", "luckily", "unluckily", "thankfully", "regrettably",
          "apparently", "seemingly", "reportedly",
          "alas", "honestly", "actually", "frankly", "well", "so", "oh", "ah", "hmm", "um", "uh", "but", "however",
          "basically", "in short", "in a word", "simply put", "short answer", "the short answer", "the short answer is",
          "the answer", "the answer is", "long story short", "to be honest", "to be fair", "in fact", "as it happens",
          "good news", "bad news", "great news", "the good news is", "the bad news is", "great question",
          "good question", "i'm afraid", "i am afraid", "im afraid", "i'm sorry", "i am sorry", "im sorry", "sorry",
          "so sorry", "apologies", "my apologies", "i'm sorry to say", "i am sorry to say", "sorry to say",
          "i regret to say", "i'm happy to say", "i am happy to say", "happy to say", "i'm glad to say",
          "i am glad to say", "glad to say", "i'm pleased to say", "pleased to say", "hi", "hello", "hey", "hi there",
          "hello there", "hey there", "thanks",
          "thank you", "thanks for asking", "happy to help", "glad you asked", "sir", "ma'am", "friend", "mate",
          "buddy", "dude",
          "according to the documents", "according to the context", "based on the documents",
          "based on the context", "based on the provided context", "according to the policy",
          "tl;dr", "tldr", "bottom line", "the bottom line", "the bottom line is", "to answer your question",
          "so to answer your question", "the answer to your question", "the answer to your question is",
          "to sum up", "in summary", "quick answer", "the quick answer", "the quick answer is", "also"}
#: subjects of a short answer that echoes the question's auxiliary ("They can't.", "It is.", "You can."); "I" and "we"
#: only after a yes/no word ("No, we don't."): alone, "I can't." is the assistant declining
ECHO_SUBJECTS = {"you", "he", "she", "it", "they", "this", "that", "these", "those", "there"}
#: adverbs inside such an echo ("They really can't.", "It certainly is.", "They can't either.")
ECHO_ADVERBS = {"certainly", "definitely", "absolutely", "really", "surely", "actually", "indeed", "sadly",
                "unfortunately", "still", "just", "truly", "too", "either"}
#: negated auxiliaries typed without the apostrophe ("They cant.")
NEG_AUX_BARE = {"isnt": "is", "arent": "are", "wasnt": "was", "werent": "were", "cant": "can", "couldnt": "could",
                "wont": "will", "wouldnt": "would", "shouldnt": "should", "mustnt": "must", "dont": "do",
                "doesnt": "does", "didnt": "did", "hasnt": "has", "havent": "have", "hadnt": "had"}
#: symbols and emoji that answer yes or no on their own (thumbs, check and cross marks, OK, 100, gestures), as they
#: read after rendering (variation selectors and joiners dropped, skin tones and gender signs kept beside them)
YES_SYMBOLS = frozenset("\U0001F44D\u2705\u2714\u2713\u2611\U0001F44C\U0001F4AF\U0001F197\U0001F646"
                        "\U0001F5F8\U0001F5F9")
NO_SYMBOLS = frozenset("\U0001F44E\u274C\u274E\u2717\u2718\U0001F645\U0001F6AB\u26D4\U0001F5F4\U0001F5F5"
                       "\U0001F5F6\U0001F5F7\u2612\u2715\u2716\U0001F6D1")
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
                                                           "took", "became", "began", "ran", "held", "sold", "had",
                                                           "bought", "brought", "sent", "paid", "got", "kept", "left",
                                                           "spent", "lost", "told", "said", "saw", "gone", "went"}


#: nationality and language adjectives: a capitalised word that qualifies a noun after a name ("Are X and Y American
#: authors?") rather than ending it
DEMONYMS = frozenset("""
american british english scottish welsh irish french german italian spanish portuguese dutch belgian swiss austrian
swedish norwegian danish finnish icelandic polish czech slovak hungarian romanian bulgarian greek turkish russian
ukrainian serbian croatian bosnian slovenian albanian estonian latvian lithuanian canadian mexican brazilian argentine
argentinian chilean peruvian colombian venezuelan cuban jamaican australian zealander chinese japanese korean
vietnamese thai indian pakistani bangladeshi nepalese indonesian filipino malaysian singaporean iranian iraqi israeli
egyptian moroccan algerian tunisian nigerian kenyan ghanaian ethiopian african european asian latin hispanic arab
arabic persian jewish catholic christian muslim hindu buddhist soviet roman byzantine victorian dominican haitian
puerto rican
""".split())
