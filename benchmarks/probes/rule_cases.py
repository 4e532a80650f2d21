"""Cases: dict(id, rule, q, ctx, a, faithful). faithful=True -> should pass; False -> hallucination, should block."""
RET = ["Items can be returned within 30 days of delivery. Gift cards cannot be returned. Refunds are issued to the "
       "original payment method within 5 business days. Opened software cannot be returned. Shipping is free on "
       "orders over $50."]
PLAN = ["The Pro plan costs $20 per month and includes priority support and a dedicated account manager. The Basic "
        "plan costs $8 per month and does not include priority support. Both plans include email support and 10 GB "
        "of storage. Annual billing saves two months."]
HR = ["Full-time employees accrue 20 days of paid vacation per year. Vacation requests must be submitted at least "
      "two weeks in advance through the HR portal. Unused vacation days, up to a maximum of 5, can be carried over "
      "to the next calendar year.",
      "Employees are eligible for parental leave of 16 weeks at full pay after 6 months of employment. Remote work "
      "is allowed up to 3 days per week with manager approval."]
CLINIC = ["Dr. Smith works on Mondays and Tuesdays. Dr. Jones does not work on Mondays. The clinic is closed on "
          "Sundays. Appointments can be booked online or by phone. Walk-in patients are seen from 8 am to 11 am."]
BANK = ["The Everyday checking account has no monthly fee. The Premium checking account has a monthly fee of $15, "
        "which is waived for balances over $5,000. Savings accounts earn 4.1% APY. Wire transfers cost $25. "
        "Overdraft protection is available on both checking accounts."]
HOTEL = ["Check-in begins at 3 pm and check-out is at 11 am. Breakfast is included for guests booking directly. "
         "Pets under 25 pounds are allowed for a fee of $40 per night. Parking costs $18 per day. The pool is open "
         "from 7 am to 10 pm."]
AIR = ["Each passenger may bring one carry-on bag and one personal item. Carry-on bags must be no longer than 22 "
       "inches. Checked bags cost $35 for the first bag and $45 for the second. Flights can be changed without a fee "
       "up to 24 hours before departure. Basic Economy tickets cannot be changed or refunded."]
INS = ["The policy covers water damage from burst pipes. Flood damage is not covered. The deductible is $1,000 per "
       "claim. Claims must be filed within 60 days of the incident. Jewelry is covered up to $2,500."]
UNIV = ["The fall semester begins on September 3. Students may take up to 18 credits per semester. Tuition is $1,240 "
        "per credit hour. Late registration carries a $75 fee. Financial aid applications are due by March 1."]
TEL = ["The Unlimited plan includes 50 GB of high-speed data, after which speeds are reduced. International roaming "
       "is included in Canada and Mexico. The plan costs $65 per month for one line. Adding a second line costs $40 "
       "per month. Hotspot use is limited to 15 GB."]
SW = ["Version 3.2 no longer supports Python 3.7. The CLI requires an API key, which can be created in the dashboard. "
      "Rate limits are 100 requests per minute on the free tier and 1,000 requests per minute on the paid tier. "
      "Webhooks are retried up to three times."]
CO = ["Acme was founded in 2009 by Maria Lopez. She served as CEO until 2018, when she was succeeded by David Chen. "
      "The company has twenty-five offices and 1,240 employees."]
STORE = ["The pharmacist approved the refund for the prescription. The cashier denied the exchange request."]
# multi-chunk contexts whose numbers are written both ways
BANK2 = ["Transfers between your own accounts are free and usually arrive within two business days.",
         "Withdrawals at out-of-network ATMs cost $2 each."]
LOAN = ["Applications are reviewed within five business days.", "A late payment incurs a 5% fee."]
GYM = ["Group classes start at ten in the morning on weekends.", "The sauna closes at 10:30 pm every day."]
SHIP = ["Orders ship within two days.", "Standard delivery takes 2-5 business days after shipping."]

CASES = []
def add(i, rule, q, ctx, a, faithful=True):
    CASES.append(dict(id=i, rule=rule, q=q, ctx=ctx, a=a, faithful=faithful))

# ===================== FAITHFUL =====================
# --- asides: parentheses / commas with like, e.g., such as, including, except
add("f-as1", "aside", "What can't be returned?", RET, "Some items (such as gift cards and opened software) cannot be returned.")
add("f-as2", "aside", "What does the Pro plan include?", PLAN, "The Pro plan includes premium extras (like priority support and a dedicated account manager) for $20 per month.")
add("f-as3", "aside", "What comes with both plans?", PLAN, "Both plans include the basics (e.g. email support) and 10 GB of storage.")
add("f-as4", "aside", "What is the return policy?", RET, "Most purchases, except gift cards and opened software, can be returned within 30 days of delivery.")
add("f-as5", "aside", "What does my policy cover?", INS, "Water damage (e.g. from burst pipes) is covered, but flood damage is not.")
add("f-as6", "aside", "Can I return a gift card?", RET, "Gift cards, like I mentioned, cannot be returned.")
add("f-as7", "aside", "Which accounts have fees?", BANK, "Some accounts, such as Premium checking, have a monthly fee of $15.")
add("f-as8", "aside", "What's the difference between the plans?", PLAN, "The Pro plan adds perks, such as priority support, that the Basic plan lacks.")
add("f-as9", "aside", "Does roaming work abroad?", TEL, "The Unlimited plan includes international roaming (e.g. Canada and Mexico) as part of the monthly price.")
add("f-as10", "aside", "What are the baggage rules?", AIR, "Fees (like $35 for the first checked bag) apply to checked bags.")
add("f-as11", "aside", "What's covered?", INS, "Valuable items (for example jewelry) are covered up to $2,500.")
add("f-as12", "aside", "What can I return?", RET, "Anything you bought (other than gift cards and opened software) can be returned within 30 days of delivery.")
add("f-as13", "aside", "How do I get a CLI key?", SW, "You'll need an API key, like the docs say, which can be created in the dashboard.")
add("f-as14", "aside", "What are the rate limits?", SW, "Requests on the free tier (e.g. from the CLI) are limited to 100 per minute.")
add("f-as15", "aside", "Which days does Dr. Smith work?", CLINIC, "Dr. Smith works early in the week (namely Mondays and Tuesdays), like most weeks.")
add("f-as16", "aside", "Who can get breakfast?", HOTEL, "Guests (especially those booking directly) ... actually, only guests booking directly get breakfast included.")
# --- label: value lines / colons in prose
add("f-lb1", "label", "Can I bring my pet?", HOTEL, "Pets: allowed if under 25 pounds, for a fee of $40 per night.")
add("f-lb2", "label", "What does the hotel offer?", HOTEL, "- Breakfast: included for guests booking directly\n- Parking: available for $18 per day\n- Pool: open from 7 am to 10 pm")
add("f-lb3", "label", "What are the fees?", BANK, "- Everyday checking: no monthly fee\n- Monthly fee on Premium: waived for balances over $5,000\n- Wire transfers: $25 each")
add("f-lb4", "label", "What is covered?", INS, "Flood damage: not covered.\nJewelry: covered up to $2,500.")
add("f-lb5", "label", "What if I register late?", UNIV, "Late registration: subject to a $75 fee.")
add("f-lb6", "label", "What can't be returned?", RET, "One exception: opened software cannot be returned.")
add("f-lb7", "label", "What's the catch with Basic?", PLAN, "The downside: does not include priority support.")
add("f-lb8", "label", "Is the deposit refundable?", RET, "Good news: refunds are issued to the original payment method within 5 business days.")
add("f-lb9", "label", "When is Dr. Smith in?", CLINIC, "Dr. Smith: available on Mondays and Tuesdays.")
add("f-lb10", "label", "What should I know about returns?", RET, "Keep in mind: opened software cannot be returned.")
add("f-lb11", "label", "Can I change a Basic Economy ticket?", AIR, "Short version: Basic Economy tickets cannot be changed or refunded.")
add("f-lb12", "label", "What are the vacation rules?", HR, "Vacation requests: submitted at least two weeks in advance through the HR portal.")
add("f-lb13", "label", "What are the hotspot limits?", TEL, "Hotspot use: limited to 15 GB.")
add("f-lb14", "label", "Tell me about the Unlimited plan.", TEL, "The main thing to know: speeds are reduced after 50 GB of high-speed data.")
add("f-lb15", "label", "How do I book?", CLINIC, "Booking: online or by phone. Walk-ins: seen from 8 am to 11 am.")
# --- subjectless predicate after a short sentence
add("f-sp1", "subjectless", "Can I bring my dog?", HOTEL, "Pets under 25 pounds. Allowed for a fee of $40 per night.")
add("f-sp2", "subjectless", "Is breakfast included?", HOTEL, "Good news! Included for guests who book directly.")
add("f-sp3", "subjectless", "Is overdraft protection available?", BANK, "Absolutely! Available on both checking accounts.")
add("f-sp4", "subjectless", "Can I change my flight?", AIR, "Yes! Free of charge up to 24 hours before departure.")
add("f-sp5", "subjectless", "Is parking available?", HOTEL, "Sure thing! Available for $18 per day.")
add("f-sp6", "subjectless", "Is the Premium fee waived?", BANK, "Great question. Waived for balances over $5,000.")
add("f-sp7", "subjectless", "How are refunds issued?", RET, "Refunds are issued to the original payment method. Processed within 5 business days.")
add("f-sp8", "subjectless", "Can I take more than 18 credits?", UNIV, "Thanks for asking! Students may take up to 18 credits per semester.")
add("f-sp9", "subjectless", "Is flood damage covered?", INS, "Unfortunately not. Excluded from the policy, unlike water damage from burst pipes.")
add("f-sp10", "subjectless", "What about webhooks?", SW, "Webhooks. Retried up to three times.")
add("f-sp11", "subjectless", "Is there a fee for pets?", HOTEL, "There is. Charged at $40 per night for pets under 25 pounds.")
add("f-sp12", "subjectless", "Do you have questions?", RET, "Items can be returned within 30 days of delivery. Should you have questions, contact support.")
# --- opinions / hedges
add("f-op1", "opinion", "When are walk-ins seen?", CLINIC, "I believe walk-in patients are seen from 8 am to 11 am.")
add("f-op2", "opinion", "Is flood damage covered?", INS, "I understand your frustration. Unfortunately, flood damage is not covered.")
add("f-op3", "opinion", "When is check-in?", HOTEL, "I'm sure you'll enjoy your stay! Check-in begins at 3 pm.")
add("f-op4", "opinion", "Can I change my flight?", AIR, "We understand that plans change. Flights can be changed without a fee up to 24 hours before departure.")
add("f-op5", "opinion", "Should I pay annually?", PLAN, "If you ask me, annual billing is worth it, since it saves two months.")
add("f-op6", "opinion", "How do I book?", CLINIC, "In my experience, appointments can be booked online or by phone.")
add("f-op7", "opinion", "What is tuition?", UNIV, "As far as I know, tuition is $1,240 per credit hour.")
add("f-op8", "opinion", "Is the Premium fee waived?", BANK, "I'd say the $15 fee is waived for balances over $5,000.")
add("f-op9", "opinion", "What should I do?", TEL, "I think you'll be happy with the Unlimited plan, which includes 50 GB of high-speed data.")
add("f-op10", "opinion", "Can I return opened software?", RET, "I'm afraid opened software cannot be returned.")
add("f-op11", "opinion", "When is financial aid due?", UNIV, "I'm not sure about your specific case, but financial aid applications are due by March 1.")
add("f-op12", "opinion", "What's the deductible?", INS, "I expect you'll want to know the deductible: it is $1,000 per claim.")
add("f-op13", "opinion", "When does the semester start?", UNIV, "I guess the short answer is September 3, when the fall semester begins.")
add("f-op14", "opinion", "Is the Everyday account free?", BANK, "We're confident you'll like it: the Everyday checking account has no monthly fee.")
# --- questions inside answers
add("f-q1", "question", "Can I change my flight?", AIR, "Do you know your booking reference? Flights can be changed without a fee up to 24 hours before departure.")
add("f-q2", "question", "Does my plan include priority support?", PLAN, "Do you know which plan you're on? The Basic plan does not include priority support, but the Pro plan does.")
add("f-q3", "question", "How many credits can I take?", UNIV, "Do you know how many credits you need? Students may take up to 18 credits per semester.")
add("f-q4", "question", "Is annual billing cheaper?", PLAN, "Did you know annual billing saves two months?")
add("f-q5", "question", "Is breakfast included?", HOTEL, "Isn't it nice that breakfast is included for guests booking directly?")
add("f-q6", "question", "Can I bring my cat?", HOTEL, "Who says you can't bring a pet? Pets under 25 pounds are allowed for a fee of $40 per night.")
add("f-q7", "question", "How do I book?", CLINIC, "Did you know that appointments can be booked online or by phone?")
add("f-q8", "question", "What's the fee for wires?", BANK, "Wondering about wire transfers? They cost $25.")
add("f-q9", "question", "What are the rate limits?", SW, "Do you know what tier you're on? The free tier allows 100 requests per minute.")
add("f-q10", "question", "Who runs Acme?", CO, "Who said Maria Lopez still runs Acme? David Chen succeeded her as CEO in 2018.")
# --- navigation: See / Check / Visit / Per / Details
add("f-nv1", "nav", "How do I get an API key?", SW, "See the dashboard, where API keys can be created.")
add("f-nv2", "nav", "Can I change my ticket?", AIR, "Check whether your ticket is Basic Economy, since those cannot be changed.")
add("f-nv3", "nav", "Can I bring my dog?", HOTEL, "Check that your pet is under 25 pounds before booking, since only pets under 25 pounds are allowed.")
add("f-nv4", "nav", "When is check-out?", HOTEL, "Check out is at 11 am.")
add("f-nv5", "nav", "When can I check in?", HOTEL, "Check in begins at 3 pm.")
add("f-nv6", "nav", "What's covered?", INS, "Per the policy, jewelry is covered up to $2,500.")
add("f-nv7", "nav", "When must claims be filed?", INS, "Details: claims must be filed within 60 days of the incident.")
add("f-nv8", "nav", "Is the pool open late?", HOTEL, "Check out the pool, which is open from 7 am to 10 pm.")
add("f-nv9", "nav", "How do I take vacation?", HR, "Visit the HR portal, where vacation requests must be submitted at least two weeks in advance.")
add("f-nv10", "nav", "How do I get an API key?", SW, "Visit the dashboard if you need to create an API key.")
add("f-nv11", "nav", "What are the fees?", BANK, "See below: wire transfers cost $25.")
add("f-nv12", "nav", "How do I book?", CLINIC, "Check if you can book online; appointments can be booked online or by phone.")
# --- anaphoric noun phrases / both / either / he-she
add("f-an1", "anaphoric", "What can't be returned?", RET, "Gift cards and opened software are the exceptions. These items cannot be returned.")
add("f-an2", "anaphoric", "What does Basic cost?", PLAN, "The Basic plan costs $8 per month. This option does not include priority support.")
add("f-an3", "anaphoric", "What does Unlimited include?", TEL, "The Unlimited plan costs $65 per month for one line. This option includes 50 GB of high-speed data.")
add("f-an4", "anaphoric", "Which plan has priority support?", PLAN, "If you need priority support, the Pro plan is the one to choose. That one costs $20 per month.")
add("f-an5", "anaphoric", "Do both accounts have overdraft protection?", BANK, "The Everyday and Premium checking accounts differ in fees. Both offer overdraft protection.")
add("f-an6", "anaphoric", "Who founded Acme?", CO, "Acme was founded in 2009 by Maria Lopez. She served as CEO until 2018.")
add("f-an7", "anaphoric", "Who approved the refund?", STORE, "The pharmacist reviewed your case. She approved the refund for the prescription.")
add("f-an8", "anaphoric", "What about bags?", AIR, "Checked bags cost $35 for the first bag. That one is cheaper than the second, which costs $45.")
add("f-an9", "anaphoric", "What are the plans?", PLAN, "There are two plans, Basic and Pro. Both include email support and 10 GB of storage.")
add("f-an10", "anaphoric", "What can't be changed?", AIR, "Basic Economy tickets are the cheapest fares. Such tickets cannot be changed or refunded.")
add("f-an11", "anaphoric", "What can't I return?", RET, "Items can usually be returned within 30 days of delivery. Those that are gift cards cannot be returned, and this also applies to opened software.")
# --- numbers in other spellings
add("f-nu1", "numbers", "What is tuition?", UNIV, "Tuition is $1240 per credit hour.")
add("f-nu2", "numbers", "How far ahead do I request vacation?", HR, "Submit requests at least 2 weeks in advance through the HR portal.")
add("f-nu3", "numbers", "How often are webhooks retried?", SW, "Webhooks are retried up to 3 times.")
add("f-nu4", "numbers", "What do ATM withdrawals cost?", BANK2, "Withdrawals at out-of-network ATMs cost $2 each.")
add("f-nu5", "numbers", "What is the late fee?", LOAN, "A late payment incurs a 5% fee.")
add("f-nu6", "numbers", "When does the sauna close?", GYM, "The sauna closes at 10:30 pm every day.")
add("f-nu7", "numbers", "How long is delivery?", SHIP, "Standard delivery takes 2-5 business days after shipping.")
add("f-nu8", "numbers", "How many employees does Acme have?", CO, "Acme has 1240 employees and 25 offices.")
add("f-nu9", "numbers", "What are the paid limits?", SW, "The paid tier allows 1000 requests per minute.")
add("f-nu10", "numbers", "How long to review?", LOAN, "Applications are reviewed within 5 business days, and late payments incur a 5% fee.")
add("f-nu11", "numbers", "How long do transfers take?", BANK2, "Transfers between your own accounts usually arrive within 2 business days, and out-of-network ATM withdrawals cost $2.")
# --- no longer / double negation
add("f-nl1", "no-longer", "Does 3.2 support Python 3.7?", SW, "Version 3.2 no longer supports Python 3.7.")
add("f-nl2", "no-longer", "How big can my carry-on be?", AIR, "Carry-on bags must be no longer than 22 inches.")
add("f-nl3", "no-longer", "Is Python 3.7 supported?", SW, "No. Python 3.7 is no longer supported as of version 3.2.")
add("f-nl4", "no-longer", "Will I pay the Premium fee?", BANK, "You'll no longer be charged the $15 fee once your balance is over $5,000.")
add("f-nl5", "no-longer", "Is overdraft protection available?", BANK, "Overdraft protection is not unavailable on any checking account; both have it.")
add("f-nl6", "no-longer", "Can I use Python 3.7?", SW, "Not with version 3.2, which no longer supports it.")
# --- the same applies to
add("f-sa1", "same-for", "Where is roaming included?", TEL, "International roaming is included in Canada. The same goes for Mexico.")
add("f-sa2", "same-for", "Which accounts have overdraft protection?", BANK, "Overdraft protection is available on the Everyday account. The same applies to the Premium account.")
add("f-sa3", "same-for", "Does Basic have email support?", PLAN, "The Pro plan includes email support. The same is true of the Basic plan.")
add("f-sa4", "same-for", "What days does Dr. Smith work?", CLINIC, "Dr. Smith works on Mondays. The same is true for Tuesdays.")
add("f-sa5", "same-for", "What's the claim deadline?", INS, "Claims must be filed within 60 days of the incident. This applies to every claim.")
add("f-sa6", "same-for", "What can't be returned?", RET, "Gift cards cannot be returned. Ditto for opened software.")
# --- yes/no + dependent clause
add("f-yn1", "yes-dependent", "Can I change my Basic Economy ticket?", AIR, "No, because Basic Economy tickets cannot be changed or refunded.")
add("f-yn2", "yes-dependent", "Is breakfast included?", HOTEL, "Yes, if you book directly.")
add("f-yn3", "yes-dependent", "Can I bring my dog?", HOTEL, "Yes, as long as it weighs under 25 pounds and you pay the $40 nightly fee.")
add("f-yn4", "yes-dependent", "Can I take 20 credits?", UNIV, "No, since students may take up to 18 credits per semester.")
add("f-yn5", "yes-dependent", "Is the Premium fee ever waived?", BANK, "Yes, when your balance is over $5,000.")
add("f-yn6", "yes-dependent", "Does the Unlimited plan have unlimited high-speed data?", TEL, "No, because speeds are reduced after 50 GB.")
add("f-yn7", "yes-dependent", "Is there a fee for a second line?", TEL, "Yes, since adding a second line costs $40 per month.")
add("f-yn8", "yes-dependent", "Is flood damage covered?", INS, "No, although water damage from burst pipes is covered.")
add("f-yn9", "yes-dependent", "Can I carry over vacation days?", HR, "Yes, although only up to 5 unused days.")
add("f-yn10", "yes-dependent", "Can I work remotely?", HR, "You can, with manager approval, up to 3 days per week.")
add("f-yn11", "yes-dependent", "Do I need an API key for the CLI?", SW, "Yes, because the CLI requires an API key, which can be created in the dashboard.")
add("f-yn12", "yes-dependent", "Can I return my item?", RET, "Yes, so long as it's within 30 days of delivery.")
# --- closings / titles (should claim nothing)
add("f-cl1", "closing", "When is check-in?", HOTEL, "Check-in begins at 3 pm. Have a great stay!")
add("f-cl2", "closing", "What does Pro cost?", PLAN, "The Pro plan costs $20 per month. Would you like help choosing a plan?")
add("f-cl3", "closing", "When is aid due?", UNIV, "Financial aid applications are due by March 1. Good luck with your application!")
add("f-cl4", "title", "What benefits are there?", HR, "## Benefits overview\n\n### Parental leave\nEmployees are eligible for 16 weeks at full pay after 6 months of employment.")
add("f-cl5", "closing", "Can I bring a carry-on?", AIR, "Each passenger may bring one carry-on bag and one personal item. Safe travels!")

# ===================== HALLUCINATIONS (bypass probes) =====================
add("h-as1", "aside", "What is the return policy?", RET, "Items (including gift cards) can be returned within 30 days of delivery.", False)
add("h-as2", "aside", "What is the return policy?", RET, "Items (except electronics) can be returned within 30 days of delivery.", False)
add("h-as3", "aside", "What is the return policy?", RET, "Items, besides gift cards, can be returned within 30 days of delivery.", None)  # ambiguous: "besides" = "except" (faithful) or "in addition to"
add("h-as4", "aside", "What does Basic include?", PLAN, "The Basic plan includes support (like priority support) for $8 per month.", False)
add("h-as5", "aside", "What is covered?", INS, "Water damage (except from burst pipes) is covered.", False)
add("h-as6", "aside", "What is covered?", INS, "Water damage (including flood damage) is covered under the policy.", False)
add("h-as7", "aside", "What can I return?", RET, "Anything (like gift cards, but not opened software) can be returned within 30 days of delivery.", False)
add("h-lb1", "label", "Can I return a gift card?", RET, "Gift cards: returnable within 30 days.", False)
add("h-lb2", "label", "What does Basic include?", PLAN, "Basic plan: includes priority support.", False)
add("h-lb3", "label", "Is flood damage covered?", INS, "Flood damage: covered, after the $1,000 deductible.", False)
add("h-sp1", "subjectless", "Can I return a gift card?", RET, "Gift cards. Returnable within 30 days.", False)
add("h-sp2", "subjectless", "Is flood damage covered?", INS, "Good news! Covered up to $2,500.", False)
add("h-sp3", "subjectless", "Can I bring my dog?", HOTEL, "Absolutely! Allowed free of charge.", False)
add("h-op1", "opinion", "Can I return a gift card?", RET, "If you ask me, gift cards can be returned within 30 days.", False)
add("h-op2", "opinion", "Can I return a gift card?", RET, "I believe gift cards can be returned within 30 days.", False)
add("h-op3", "opinion", "Is flood damage covered?", INS, "I'm not sure, but flood damage should be covered.", False)
add("h-op4", "opinion", "Can I return a gift card?", RET, "I couldn't find details on gift cards, but they can be returned within 30 days.", False)
add("h-op5", "opinion", "Can I return a gift card?", RET, "I can't guarantee anything, but gift cards are usually returnable.", False)
add("h-op6", "opinion", "Can I return a gift card?", RET, "We assume no restrictions apply to gift card returns.", False)
add("h-q1", "question", "Can I return a gift card?", RET, "Did you know gift cards can be returned within 30 days?", False)
add("h-q2", "question", "Does Basic include priority support?", PLAN, "Who said the Basic plan doesn't include priority support?", False)
add("h-q3", "question", "Is flood damage covered?", INS, "Isn't it great that flood damage is covered?", False)
add("h-q4", "question", "Is flood damage covered?", INS, "Do you know flood damage is covered?", False)
add("h-nv1", "nav", "Can I return a gift card?", RET, "See [gift cards can be returned within 30 days](https://shop.example.com/returns).", False)
add("h-nv2", "nav", "Is flood damage covered?", INS, "Check out the flood coverage, which is included in the policy.", False)
add("h-an1", "anaphoric", "Which plan has priority support?", PLAN, "You can choose the Basic or the Pro plan. Both include priority support.", False)
add("h-an2", "anaphoric", "Which plan has priority support?", PLAN, "The Pro plan and the Basic plan are similar. Both can include priority support.", False)
add("h-an3", "anaphoric", "Which plan has priority support?", PLAN, "Pick the Pro plan or the Basic plan. Either one includes priority support.", False)
add("h-an4", "anaphoric", "Which plan has priority support?", PLAN, "The Pro plan is popular, but the Basic plan is cheaper. That one includes priority support.", False)
add("h-an5", "anaphoric", "What can be returned?", RET, "Gift cards are different from regular items. These products can be returned within 30 days of delivery.", False)
add("h-an6", "anaphoric", "Who approved the refund?", STORE, "The cashier handled your case. She approved the refund for the prescription.", False)
add("h-an7", "anaphoric", "Who approved the exchange?", STORE, "The pharmacist was on duty. He approved the exchange request.", False)
add("h-an8", "anaphoric", "Which days does Dr. Jones work?", CLINIC, "Dr. Smith and Dr. Jones share the week. Both can see patients on Mondays.", False)
add("h-an9", "anaphoric", "What can be returned?", RET, "Items can be returned within 30 days. Gift cards are popular too. Such items can be returned within 30 days of delivery as well.", False)
add("h-nu1", "numbers", "How many offices does Acme have?", CO, "Acme has 20 offices.", False)
add("h-nu2", "numbers", "How many offices does Acme have?", CO, "Acme has 5 offices.", False)
add("h-nu3", "numbers", "How long does shipping take?", SHIP, "Orders ship within 5 days.", False)
add("h-nl1", "no-longer", "Can I return a gift card?", RET, "Gift cards are no longer non-returnable.", False)
add("h-nl2", "no-longer", "Can I return a gift card?", RET, "Gift cards are no longer unreturnable.", False)
add("h-nl3", "no-longer", "Does 3.2 support Python 3.7?", SW, "Version 3.2 is not non-compatible with Python 3.7.", False)
add("h-nl4", "no-longer", "Is flood damage covered?", INS, "Flood damage is no longer excluded.", False)
add("h-nl5", "no-longer", "Can I return opened software?", RET, "Opened software is not unreturnable.", False)
add("h-sa1", "same-for", "Can I return a gift card?", RET, "Items can be returned within 30 days of delivery. The same applies to gift cards.", False)
add("h-sa2", "same-for", "Can I return a gift card?", RET, "Items can be returned within 30 days of delivery. The same applies to gift cards bought online.", False)
add("h-sa3", "same-for", "Does Basic include priority support?", PLAN, "The Pro plan includes priority support. Same goes for the Basic plan, as of this year.", False)
add("h-sa4", "same-for", "Is flood damage covered?", INS, "Water damage from burst pipes is covered. That also holds for flooding.", False)
add("h-yn1", "yes-dependent", "Can I return a gift card?", RET, "Yes, because refunds are issued within 5 business days.", False)
add("h-yn2", "yes-dependent", "Can I return a gift card?", RET, "Yes, as long as it is within 30 days of delivery.", False)
add("h-yn3", "yes-dependent", "Is flood damage covered?", INS, "Yes, provided the claim is filed within 60 days of the incident.", False)
add("h-yn4", "yes-dependent", "Can I change a Basic Economy ticket?", AIR, "You can, up to 24 hours before departure.", False)
add("h-yn5", "yes-dependent", "Does Basic include priority support?", PLAN, "It does, since both plans include email support.", False)
add("h-yn6", "yes-dependent", "Can I take 24 credits?", UNIV, "Yes, because students may take up to 18 credits per semester.", False)
add("h-cl1", "closing", "Is breakfast included?", HOTEL, "Have a great stay, and breakfast is free for every guest!", False)
add("h-cl2", "closing", "Is the pool open late?", HOTEL, "Enjoy the pool! It's open 24 hours.", False)
add("h-cl3", "closing", "Is parking free?", HOTEL, "Good luck with your free parking!", False)
add("h-cl4", "closing", "Is parking free?", HOTEL, "Would you like help reserving your free parking space?", False)
add("h-ti1", "title", "Is breakfast included?", HOTEL, "## Key points: breakfast included for all guests\n\nCheck-in begins at 3 pm.", False)
add("h-ti2", "title", "Are pets allowed?", HOTEL, "### Pets allowed free — what you need to know\n\nParking costs $18 per day.", False)

# ===================== ROUND 2: generality of the regressions, clean bypass probes =====================
STORE2 = ["The pharmacist approved the refund. The cashier denied the exchange request. The store manager signed the form."]
# --- faithful: "Per X, ..." / "Via X, ..." attribution openers (nav rule)
add("f2-nv1", "nav", "How many vacation days do I get?", HR, "Per the handbook, full-time employees accrue 20 days of paid vacation per year.")
add("f2-nv2", "nav", "What's the hotspot limit?", TEL, "Per your plan, hotspot use is limited to 15 GB.")
add("f2-nv3", "nav", "Is flood damage covered?", INS, "Per the policy terms, flood damage is not covered.")
add("f2-nv4", "nav", "How do I get an API key?", SW, "Via the dashboard, you can create the API key the CLI requires.")
add("f2-nv5", "nav", "When are walk-ins seen?", CLINIC, "Per the clinic's schedule, walk-in patients are seen from 8 am to 11 am.")
add("f2-nv6", "nav", "What's the late registration fee?", UNIV, "Per university rules, late registration carries a $75 fee.")
add("f2-nv7", "nav", "Where can I see the rules?", RET, "Details are in the return policy: items can be returned within 30 days of delivery.")
# --- faithful: "no longer"
add("f2-nl1", "no-longer", "Does 3.2 work with Python 3.7?", SW, "Version 3.2 no longer works with Python 3.7.")
add("f2-nl2", "no-longer", "What happens after 50 GB?", TEL, "After 50 GB, you no longer get high-speed data; speeds are reduced.")
add("f2-nl3", "no-longer", "When is the Premium fee waived?", BANK, "The $15 monthly fee no longer applies once your balance is over $5,000.")
add("f2-nl4", "no-longer", "Is Python 3.7 supported?", SW, "Python 3.7 users will no longer be supported as of version 3.2.")
add("f2-nl5", "no-longer", "Can I change my flight the day before?", AIR, "Within 24 hours of departure, flights can no longer be changed without a fee.")
# --- faithful: yes/no + reason clause (an inference from the reason)
add("f2-yn1", "yes-dependent", "Can I book an appointment for Sunday?", CLINIC, "No, since the clinic is closed on Sundays.")
add("f2-yn2", "yes-dependent", "Can I bring my 10-pound cat?", HOTEL, "Yes, since pets under 25 pounds are allowed, for a fee of $40 per night.")
add("f2-yn3", "yes-dependent", "Will my flood claim be paid?", INS, "No, because flood damage is not covered.")
add("f2-yn4", "yes-dependent", "Can I carry over 10 vacation days?", HR, "No, because only up to 5 unused days can be carried over.")
add("f2-yn5", "yes-dependent", "Can I make 200 requests per minute on the free tier?", SW, "No, because the free tier is limited to 100 requests per minute.")
add("f2-yn6", "yes-dependent", "Is the pool open at 11 pm?", HOTEL, "No, because it is open from 7 am to 10 pm.")
add("f2-yn7", "yes-dependent", "Can I move my Basic Economy flight?", AIR, "You can't, because Basic Economy tickets cannot be changed or refunded.")
add("f2-yn8", "yes-dependent", "Does Dr. Jones see patients on Mondays?", CLINIC, "No, as Dr. Jones does not work on Mondays.")
add("f2-yn9", "yes-dependent", "Is 2 GB of hotspot OK?", TEL, "Yes, since hotspot use is limited to 15 GB.")
add("f2-yn10", "yes-dependent", "Can I take 12 credits?", UNIV, "Yes, because students may take up to 18 credits per semester.")
# --- faithful: "All X (except Y) P" -- the main claim without the exception is false
add("f2-as1", "aside", "Which flights can be changed?", AIR, "All flights (except Basic Economy) can be changed without a fee up to 24 hours before departure.")
add("f2-as2", "aside", "Which accounts are free?", BANK, "All checking accounts (except Premium) have no monthly fee.")
add("f2-as3", "aside", "Which plans include priority support?", PLAN, "Every plan, except Basic, includes priority support.")
add("f2-as4", "aside", "What can I return?", RET, "All items (except gift cards and opened software) can be returned within 30 days of delivery.")
add("f2-as5", "aside", "Are tickets refundable?", AIR, "Tickets (other than Basic Economy) can be changed without a fee up to 24 hours before departure.")
add("f2-as6", "aside", "Which damage is covered?", INS, "Water damage, except flood damage, is covered when it comes from burst pipes.")
add("f2-as7", "aside", "What plans exist?", PLAN, "Plans, like the Pro plan, can include a dedicated account manager.")
# --- hallucinations with clean (supported) setup sentences
add("h2-as1", "aside", "Are pets allowed?", HOTEL, "Pets (except dogs) are allowed for a fee of $40 per night.", False)
add("h2-as2", "aside", "What's covered?", INS, "Valuables (except watches) are covered up to $2,500.", False)
add("h2-as3", "aside", "What can be changed?", AIR, "Flights (except international flights) can be changed without a fee up to 24 hours before departure.", False)
add("h2-sp1", "subjectless", "Is flood damage covered?", INS, "Yes! Covered under the policy.", False)
add("h2-sp2", "subjectless", "Can gift cards be returned?", RET, "Great news! Returnable within 30 days of delivery.", False)
add("h2-sp3", "subjectless", "Is parking free?", HOTEL, "Absolutely! Free for hotel guests.", False)
add("h2-sp4", "subjectless", "Does Basic include priority support?", PLAN, "Sure does! Included at no extra cost.", False)
add("h2-an1", "anaphoric", "Which plans include priority support?", PLAN, "The Pro plan and the Basic plan include email support. Both can also include priority support.", False)
add("h2-an2", "anaphoric", "Which plans include priority support?", PLAN, "The Pro plan and the Basic plan include email support. Both do include priority support.", False)
add("h2-an3", "anaphoric", "Which plan includes priority support?", PLAN, "The Basic plan costs $8 per month and the Pro plan costs $20 per month. That one does not include priority support.", False)
add("h2-an4", "anaphoric", "Who approved the refund?", STORE2, "The cashier denied the exchange request. She also approved the refund.", False)
add("h2-an5", "anaphoric", "Who signed the form?", STORE2, "The pharmacist approved the refund. She also signed the form.", False)
add("h2-an6", "anaphoric", "Who signed the form?", STORE2, "The store manager signed the form. He also approved the refund.", False)
add("h2-an7", "anaphoric", "Who founded Acme?", CO, "David Chen succeeded Maria Lopez as CEO in 2018. He founded the company in 2009.", False)
add("h2-an8", "anaphoric", "Which support do plans include?", PLAN, "Email support and priority support are included in the Pro plan. These options are also included in the Basic plan.", False)
add("h2-an9", "anaphoric", "What does Acme look like?", CO, "Acme was founded in 2009 by Maria Lopez. She has twenty-five offices.", False)
add("h2-sa1", "same-for", "Can gift cards be returned?", RET, "Items can be returned within 30 days of delivery. The same goes for gift cards, as of this year.", False)
add("h2-sa2", "same-for", "Is flood damage covered?", INS, "Water damage from burst pipes is covered. Same for flood damage, in most cases.", False)
add("h2-sa3", "same-for", "Does Basic have a manager?", PLAN, "The Pro plan includes a dedicated account manager. Ditto for the Basic plan, since last year.", False)
add("h2-nu1", "numbers", "How many offices?", CO, "Acme has twenty offices and 1,240 employees.", False)
add("h2-nu2", "numbers", "How many offices?", CO, "The company has 2 offices.", False)
add("h2-nu3", "numbers", "How long does the warranty last?", ["The warranty lasts twenty-four months."], "The warranty lasts 20 months.", False)
add("h2-nu4", "numbers", "How many stores?", ["The chain operates thirty-seven stores across forty-two cities."], "The chain operates 30 stores across 40 cities.", False)
add("h2-nl1", "no-longer", "Can gift cards be returned?", RET, "Gift cards are no longer non-refundable.", False)
add("h2-nl2", "no-longer", "Is Python 3.7 supported?", SW, "Python 3.7 is no longer unsupported.", False)
add("h2-yn1", "yes-dependent", "Is flood damage covered?", INS, "Yes, as long as the claim is filed within 60 days.", False)
add("h2-yn2", "yes-dependent", "Can I return a gift card?", RET, "Yes, since items can be returned within 30 days of delivery.", False)
add("h2-yn3", "yes-dependent", "Does the Basic plan include priority support?", PLAN, "Yes, because both plans include email support and 10 GB of storage.", False)
add("h2-yn4", "yes-dependent", "Can I bring a 40-pound dog?", HOTEL, "Yes, since pets are allowed for a fee of $40 per night.", False)
add("h2-op1", "opinion", "Can I return a gift card?", RET, "I don't have details about gift cards, but they can be returned within 30 days.", False)
add("h2-op2", "opinion", "Is flood damage covered?", INS, "I can't say for certain, but flood damage is covered.", False)
add("h2-op3", "opinion", "Is flood damage covered?", INS, "Frankly, I think flood damage is probably covered.", False)
add("h2-op4", "opinion", "Is flood damage covered?", INS, "I doubt flood damage is excluded.", False)
add("h2-nv1", "nav", "Is flood damage covered?", INS, "See the flood rider, which covers flood damage.", False)
add("h2-nv2", "nav", "Is flood damage covered?", INS, "Per the policy, flood damage is covered.", False)
add("h2-ti1", "title", "Is parking free?", HOTEL, "## Parking: free — key details\n\nThe pool is open from 7 am to 10 pm.", False)
add("h2-cl1", "closing", "Is parking free?", HOTEL, "Enjoy a great stay with free parking!", False)
add("h2-cl2", "closing", "Is breakfast included?", HOTEL, "Have a great day — breakfast is on us!", False)
