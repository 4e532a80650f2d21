"""Round-13 probe set (written by an evaluator session): (id, style, question, contexts, answer, faithful).
faithful None: not counted."""
# (id, style, question, contexts, answer, faithful)
T = []
def add(i, style, q, ctx, a, faithful=True):
    T.append((i, style, q, ctx if isinstance(ctx, list) else [ctx], a, faithful))

# ---------------- HR policy ----------------
HR = ["Full-time employees accrue 20 days of paid vacation per year. Vacation requests must be submitted at least "
      "two weeks in advance through the HR portal. Unused vacation days, up to a maximum of 5, can be carried over "
      "to the next calendar year.",
      "Employees are eligible for parental leave of 16 weeks at full pay after 6 months of employment. "
      "Remote work is allowed up to 3 days per week with manager approval. The company matches 401(k) "
      "contributions up to 4% of salary."]
add("hr1", "bullets", "What are the vacation rules?", HR,
    "Here are the key vacation rules:\n\n- Full-time employees accrue **20 days** of paid vacation per year.\n"
    "- Requests must be submitted at least two weeks in advance through the HR portal.\n"
    "- Up to 5 unused days can be carried over to the next calendar year.")
add("hr2", "numfmt", "How far in advance must I request vacation?", HR,
    "You need to submit your vacation request at least 14 days in advance via the HR portal.")
add("hr3", "short", "Can I carry over unused vacation days?", HR, "Yes, up to 5 days.")
add("hr4", "according", "How long is parental leave?", HR,
    "According to the provided context, employees are eligible for 16 weeks of parental leave at full pay once "
    "they have been employed for 6 months.")
add("hr5", "citation", "Can I work from home?", HR,
    "Yes. Remote work is allowed up to 3 days per week, provided your manager approves it [2].")
add("hr6", "hedge", "Does the company match 401(k) contributions?", HR,
    "Yes, the company generally matches 401(k) contributions up to 4% of your salary.")
add("hr7", "merge", "Tell me about leave and remote work.", HR,
    "After 6 months of employment you get 16 weeks of fully paid parental leave, and you can work remotely up "
    "to 3 days per week if your manager approves.")
add("hr8", "closing", "How many vacation days do I get?", HR,
    "As a full-time employee, you accrue 20 days of paid vacation per year. Let me know if you need anything else!")
add("hr9", "numbered", "How do I take vacation?", HR,
    "1. Check your balance: full-time employees accrue 20 days per year.\n"
    "2. Submit your request through the HR portal.\n3. Do this at least two weeks in advance.")
add("hr10", "numfmt", "How many vacation days can roll over?", HR,
    "A maximum of five unused vacation days can be carried over into the next calendar year.")
add("hr11", "short", "Is parental leave paid?", HR, "Yes, at full pay.")
add("hr12", "header", "What benefits are there?", HR,
    "## Benefits overview\n\n### Parental leave\n16 weeks at full pay, after 6 months of employment.\n\n"
    "### Retirement\nThe company matches 401(k) contributions up to 4% of salary.")
# twins
add("hr2h", "numfmt", "How far in advance must I request vacation?", HR,
    "You need to submit your vacation request at least 10 days in advance via the HR portal.", False)
add("hr3h", "short", "Can I carry over unused vacation days?", HR, "Yes, up to 10 days.", False)
add("hr6h", "hedge", "Does the company match 401(k) contributions?", HR,
    "Yes, the company generally matches 401(k) contributions up to 6% of your salary.", False)
add("hr1h", "bullets", "What are the vacation rules?", HR,
    "Here are the key vacation rules:\n\n- Full-time employees accrue **20 days** of paid vacation per year.\n"
    "- Requests must be approved by the CEO.\n"
    "- Up to 5 unused days can be carried over to the next calendar year.", False)
add("hr5h", "citation", "Can I work from home?", HR,
    "Yes. Remote work is allowed up to 3 days per week, and no manager approval is needed [2].", False)

# ---------------- product docs ----------------
PROD = ["The AquaPure X2 water filter removes 99.9% of lead and chlorine. The filter cartridge should be replaced "
        "every 6 months or after 500 gallons, whichever comes first. The unit is compatible with standard faucets "
        "but not with pull-out or handheld faucets.",
        "The AquaPure X2 comes with a 2-year limited warranty. The warranty does not cover damage caused by "
        "improper installation. Replacement cartridges cost $29.99 each or $79.99 for a pack of three."]
add("pr1", "short", "How often should I change the cartridge?", PROD, "Every 6 months or after 500 gallons, whichever comes first.")
add("pr2", "bold", "Does it work with pull-out faucets?", PROD,
    "No, the AquaPure X2 is **not compatible** with pull-out or handheld faucets. It works with standard faucets.")
add("pr3", "numfmt", "How long is the warranty?", PROD, "The AquaPure X2 is covered by a two-year limited warranty.")
add("pr4", "numfmt", "How much are replacement cartridges?", PROD,
    "A single replacement cartridge is $29.99, and a 3-pack costs $79.99.")
add("pr5", "quote", "What does the filter remove?", PROD,
    "The documentation states that the filter \"removes 99.9% of lead and chlorine.\"")
add("pr6", "paraphrase", "Is installation damage covered?", PROD,
    "No. Damage resulting from incorrect installation is excluded from the warranty.")
add("pr7", "multipara", "Tell me about maintenance and costs.", PROD,
    "The filter cartridge needs replacing every 6 months or after 500 gallons, whichever happens first.\n\n"
    "Replacement cartridges cost $29.99 each. If you buy a pack of three, it costs $79.99, which works out cheaper "
    "per cartridge.")
add("pr8", "italic", "Is it compatible with my handheld faucet?", PROD,
    "Unfortunately, *no*. The unit is only compatible with standard faucets, not handheld ones.")
add("pr9", "short", "Does it remove lead?", PROD, "Yes, it removes 99.9% of lead.")
add("pr10", "based", "What does the warranty not cover?", PROD,
    "Based on the documents, the warranty does not cover damage caused by improper installation.")
# twins
add("pr1h", "short", "How often should I change the cartridge?", PROD, "Every 12 months or after 500 gallons, whichever comes first.", False)
add("pr2h", "bold", "Does it work with pull-out faucets?", PROD,
    "Yes, the AquaPure X2 is **compatible** with pull-out faucets.", False)
add("pr4h", "numfmt", "How much are replacement cartridges?", PROD,
    "A single replacement cartridge is $19.99, and a 3-pack costs $79.99.", False)
add("pr9h", "added", "Does it remove lead?", PROD, "Yes, it removes 99.9% of lead. It also removes fluoride and bacteria.", False)
add("pr6h", "negflip", "Is installation damage covered?", PROD,
    "Yes. Damage resulting from incorrect installation is covered by the warranty.", False)

# ---------------- API docs ----------------
API = ["The `Client` constructor accepts a `timeout` parameter in seconds (default 30) and a `max_retries` parameter "
       "(default 3). Retries use exponential backoff starting at 0.5 seconds. Set `max_retries=0` to disable retries.",
       "Rate limits: the free tier allows 60 requests per minute; the Pro tier allows 600 requests per minute. "
       "Exceeding the limit returns HTTP 429 with a `Retry-After` header. API keys must be passed in the "
       "`Authorization` header as `Bearer <key>`."]
add("api1", "code", "How do I disable retries?", API, "Set `max_retries=0` when creating the `Client`.")
add("api2", "code", "What is the default timeout?", API, "The default `timeout` is 30 seconds.")
add("api3", "codeblock", "How do I configure retries?", API,
    "You can pass `max_retries` to the constructor:\n\n```python\nclient = Client(timeout=30, max_retries=3)\n```\n\n"
    "Retries use exponential backoff starting at 0.5 seconds. The default for `max_retries` is 3.")
add("api4", "bullets", "What are the rate limits?", API,
    "- **Free tier:** 60 requests per minute\n- **Pro tier:** 600 requests per minute\n\n"
    "If you exceed the limit, the API returns HTTP 429 with a `Retry-After` header.")
add("api5", "code", "How do I authenticate?", API,
    "Pass your API key in the `Authorization` header using the format `Bearer <key>`.")
add("api6", "derived", "How many requests per second does the free tier allow?", API,
    "The free tier allows 60 requests per minute, which is one request per second on average.")
add("api7", "short", "What status code do I get when rate limited?", API, "HTTP 429.")
add("api8", "according", "What happens if I exceed the rate limit?", API,
    "According to the docs, exceeding the limit returns an HTTP 429 response that includes a `Retry-After` header.")
add("api9", "numbered", "How do I set up the client?", API,
    "1. Create a `Client`, optionally passing `timeout` (default 30 seconds).\n"
    "2. Optionally set `max_retries` (default 3).\n"
    "3. Pass your API key in the `Authorization` header as `Bearer <key>`.")
add("api10", "paraphrase", "What is the backoff strategy?", API,
    "Retries back off exponentially, with the first wait being half a second.")
# twins
add("api1h", "code", "How do I disable retries?", API, "Set `max_retries=-1` when creating the `Client`.", False)
add("api2h", "code", "What is the default timeout?", API, "The default `timeout` is 60 seconds.", False)
add("api4h", "bullets", "What are the rate limits?", API,
    "- **Free tier:** 60 requests per minute\n- **Pro tier:** 6000 requests per minute\n\n"
    "If you exceed the limit, the API returns HTTP 429 with a `Retry-After` header.", False)
add("api5h", "code", "How do I authenticate?", API,
    "Pass your API key as the `api_key` query parameter.", False)
add("api10h", "added", "What is the backoff strategy?", API,
    "Retries back off exponentially, with the first wait being half a second. The maximum wait is capped at 60 seconds.", False)

# ---------------- medical leaflet ----------------
MED = ["Ibuprofen 200 mg tablets. Adults and children over 12 years: take 1 or 2 tablets every 4 to 6 hours as "
       "needed. Do not take more than 6 tablets in 24 hours. Take with food or milk to reduce stomach upset.",
       "Do not use if you have a stomach ulcer or are in the last 3 months of pregnancy. Consult a doctor if "
       "symptoms persist for more than 3 days. Common side effects include nausea, heartburn and dizziness."]
add("med1", "bullets", "How should I take ibuprofen?", MED,
    "- Adults and children over 12: take 1 or 2 tablets every 4 to 6 hours as needed.\n"
    "- Don't take more than 6 tablets in 24 hours.\n- Take it with food or milk to reduce stomach upset.")
add("med2", "derived", "What is the maximum daily dose in mg?", MED,
    "The maximum is 6 tablets in 24 hours. Since each tablet is 200 mg, that is 1,200 mg per day.")
add("med3", "short", "Can I take it while pregnant?", MED, "Not in the last 3 months of pregnancy.")
add("med4", "hedge", "What side effects can it cause?", MED,
    "Common side effects typically include nausea, heartburn and dizziness.")
add("med5", "closing", "When should I see a doctor?", MED,
    "You should consult a doctor if your symptoms persist for more than 3 days. I hope this helps, and feel free "
    "to ask if you have other questions.")
add("med6", "numfmt", "When should I see a doctor?", MED,
    "If your symptoms last longer than three days, consult a doctor.")
add("med7", "short", "Can I take it with a stomach ulcer?", MED, "No, it doesn't say that's safe; do not use it if you have a stomach ulcer.")
add("med8", "paraphrase", "Should I take it on an empty stomach?", MED,
    "No. It's best taken with food or milk, which helps reduce stomach upset.")
add("med9", "citation", "How often can I take it?", MED,
    "Every 4 to 6 hours as needed (Source: doc 1), with no more than 6 tablets in 24 hours.")
add("med10", "short", "Can a 15-year-old take it?", MED, "Yes. Children over 12 years can take 1 or 2 tablets every 4 to 6 hours.")
# twins
add("med2h", "derived", "What is the maximum daily dose in mg?", MED,
    "The maximum is 8 tablets in 24 hours. Since each tablet is 200 mg, that is 1,600 mg per day.", False)
add("med3h", "short", "Can I take it while pregnant?", MED, "Yes, it is safe throughout pregnancy.", False)
add("med4h", "added", "What side effects can it cause?", MED,
    "Common side effects include nausea, heartburn and dizziness. Hair loss is also common.", False)
add("med6h", "numfmt", "When should I see a doctor?", MED,
    "If your symptoms last longer than seven days, consult a doctor.", False)
add("med8h", "negflip", "Should I take it on an empty stomach?", MED,
    "Yes. It's best taken on an empty stomach.", False)

# ---------------- legal terms ----------------
LEGAL = ["Either party may terminate this Agreement with 30 days' written notice. The Customer must pay all fees "
         "accrued up to the termination date. This Agreement is governed by the laws of the State of Delaware.",
         "The Provider's total liability under this Agreement shall not exceed the fees paid by the Customer in "
         "the twelve (12) months preceding the claim. Confidentiality obligations survive termination for a "
         "period of five (5) years."]
add("leg1", "numfmt", "How much notice is required to terminate?", LEGAL,
    "Either party can terminate the Agreement by giving thirty days' written notice.")
add("leg2", "short", "Which law governs the agreement?", LEGAL, "Delaware law.")
add("leg3", "according", "Is liability capped?", LEGAL,
    "Yes. According to the agreement, the Provider's total liability cannot exceed the fees the Customer paid in "
    "the 12 months before the claim.")
add("leg4", "paraphrase", "Do confidentiality obligations end at termination?", LEGAL,
    "No. They remain in effect for five years after the Agreement ends.")
add("leg5", "bullets", "Summarize the termination terms.", LEGAL,
    "**Termination terms:**\n\n* Either party may terminate with 30 days' written notice.\n"
    "* The Customer must pay all fees accrued up to the termination date.\n"
    "* Confidentiality obligations survive termination for 5 years.")
add("leg6", "quote", "What does the agreement say about liability?", LEGAL,
    "Section on liability: \"The Provider's total liability under this Agreement shall not exceed the fees paid "
    "by the Customer in the twelve (12) months preceding the claim.\"")
add("leg7", "short", "Can the customer terminate the agreement?", LEGAL, "Yes, with 30 days' written notice.")
add("leg8", "multipara", "What happens when the agreement ends?", LEGAL,
    "When the Agreement is terminated, the Customer must still pay all fees accrued up to the termination date.\n\n"
    "In addition, the confidentiality obligations continue to apply for five years after termination.")
# twins
add("leg1h", "numfmt", "How much notice is required to terminate?", LEGAL,
    "Either party can terminate the Agreement by giving sixty days' written notice.", False)
add("leg2h", "short", "Which law governs the agreement?", LEGAL, "California law.", False)
add("leg4h", "negflip", "Do confidentiality obligations end at termination?", LEGAL,
    "Yes. They end as soon as the Agreement is terminated.", False)
add("leg7h", "short", "Can the customer terminate the agreement?", LEGAL, "Yes, at any time without notice.", False)

# ---------------- finance FAQ ----------------
FIN = ["Our high-yield savings account pays 4.25% APY with no minimum balance. There are no monthly maintenance fees. "
       "You can make up to 6 free withdrawals per month; each additional withdrawal costs $10.",
       "Wire transfers cost $25 for domestic and $45 for international transfers. Deposits are FDIC-insured up to "
       "$250,000 per depositor. Interest is compounded daily and credited monthly."]
add("fin1", "short", "Is there a minimum balance?", FIN, "No, there is no minimum balance.")
add("fin2", "numfmt", "How much is an international wire?", FIN, "An international wire transfer costs 45 dollars.")
add("fin3", "numfmt", "How much of my deposit is insured?", FIN, "Your deposits are FDIC-insured up to $250k per depositor.")
add("fin4", "bullets", "What are the fees?", FIN,
    "- Monthly maintenance fee: none\n- Withdrawals: first 6 per month are free, then $10 each\n"
    "- Domestic wire: $25\n- International wire: $45")
add("fin5", "hedge", "How is interest paid?", FIN,
    "Interest is typically compounded daily and credited to your account monthly.")
add("fin6", "short", "What's the APY?", FIN, "4.25%.")
add("fin7", "according", "How many free withdrawals do I get?", FIN,
    "Based on the provided information, you get up to 6 free withdrawals per month. Each additional one costs $10.")
add("fin8", "short", "Are there monthly fees?", FIN, "No, it doesn't have any.")
add("fin9", "derived", "What does a seventh withdrawal in a month cost?", FIN,
    "Since only the first six withdrawals each month are free, a seventh one would cost $10.")
add("fin10", "header", "Savings account summary", FIN,
    "# High-Yield Savings\n\n**Rate:** 4.25% APY\n\n**Minimum balance:** None\n\n**Insurance:** FDIC-insured up to $250,000 per depositor")
# twins
add("fin2h", "numfmt", "How much is an international wire?", FIN, "An international wire transfer costs 25 dollars.", False)
add("fin6h", "short", "What's the APY?", FIN, "5.25%.", False)
add("fin1h", "negflip", "Is there a minimum balance?", FIN, "Yes, you need a minimum balance of $1,000.", False)
add("fin5h", "hedge", "How is interest paid?", FIN,
    "Interest is typically compounded monthly and credited to your account annually.", False)
add("fin8h", "short", "Are there monthly fees?", FIN, "Yes, $5 per month.", False)

# ---------------- travel ----------------
TRAV = ["Economy passengers may bring one carry-on bag up to 7 kg and one personal item. Checked baggage allowance "
        "is 23 kg per bag. Online check-in opens 24 hours before departure and closes 90 minutes before departure.",
        "Flights can be changed free of charge up to 48 hours before departure. Cancellations made within 24 hours "
        "of booking receive a full refund. Pets under 8 kg, including the carrier, may travel in the cabin."]
add("tr1", "derived", "How heavy can my carry-on be in pounds?", TRAV,
    "Your carry-on can weigh up to 7 kg, which is about 15 pounds.")
add("tr2", "numfmt", "When does online check-in open?", TRAV, "Online check-in opens one day before departure.")
add("tr3", "numfmt", "When does online check-in close?", TRAV, "It closes an hour and a half before departure.")
add("tr4", "short", "Can I bring my cat in the cabin?", TRAV, "Yes, if it weighs under 8 kg including the carrier.")
add("tr5", "bullets", "What's the baggage allowance?", TRAV,
    "For Economy:\n\n- One carry-on bag (up to 7 kg)\n- One personal item\n- Checked bags: 23 kg each")
add("tr6", "closing", "Can I change my flight?", TRAV,
    "Yes, you can change your flight free of charge up to 48 hours before departure. Have a great trip!")
add("tr7", "numfmt", "Can I get a refund if I cancel?", TRAV,
    "If you cancel within a day of booking, you'll receive a full refund.")
add("tr8", "merge", "What are the check-in times?", TRAV,
    "Online check-in is open from 24 hours until 90 minutes before departure.")
add("tr9", "italic", "How much checked baggage can I bring?", TRAV, "Each checked bag can weigh up to *23 kg*.")
# twins
add("tr1h", "derived", "How heavy can my carry-on be in pounds?", TRAV,
    "Your carry-on can weigh up to 10 kg, which is about 22 pounds.", False)
add("tr2h", "numfmt", "When does online check-in open?", TRAV, "Online check-in opens 48 hours before departure.", False)
add("tr4h", "short", "Can I bring my cat in the cabin?", TRAV, "Yes, pets of any size can travel in the cabin.", False)
add("tr6h", "closing", "Can I change my flight?", TRAV,
    "Yes, you can change your flight free of charge up to 2 hours before departure. Have a great trip!", False)
add("tr7h", "added", "Can I get a refund if I cancel?", TRAV,
    "If you cancel within a day of booking, you'll receive a full refund. After that, you get a 50% refund.", False)

# ---------------- news ----------------
NEWS = ["The city council voted 7-2 on Tuesday to approve a $45 million budget for a new light rail line. "
        "Construction is expected to begin in spring 2025 and take about three years. Mayor Linda Park called "
        "the vote 'a turning point for public transit.'",
        "Opponents argued the project would raise property taxes. The line will connect the downtown station to "
        "the airport, with six stops along the route."]
add("nw1", "numfmt", "How much is the light rail budget?", NEWS, "The council approved a budget of $45M for the line.")
add("nw2", "short", "Did the council approve it?", NEWS, "Yes, by a vote of 7 to 2.")
add("nw3", "quote", "What did the mayor say?", NEWS,
    "Mayor Linda Park described the vote as \"a turning point for public transit.\"")
add("nw4", "derived", "When will it be finished?", NEWS,
    "Construction is expected to start in spring 2025 and should take roughly three years, so completion would "
    "likely be around 2028.")
add("nw5", "bullets", "Summarize the story.", NEWS,
    "- The city council approved a $45 million light rail budget by a 7-2 vote.\n"
    "- Construction should begin in spring 2025 and last about three years.\n"
    "- The line will run from downtown to the airport with six stops.\n"
    "- Opponents worry it will raise property taxes.")
add("nw6", "paraphrase", "Where will the line go?", NEWS,
    "It will link the downtown station with the airport and have six stops.")
add("nw7", "according", "Why did people oppose it?", NEWS,
    "According to the article, opponents argued that the project would lead to higher property taxes.")
# twins
add("nw1h", "numfmt", "How much is the light rail budget?", NEWS, "The council approved a budget of $54M for the line.", False)
add("nw2h", "short", "Did the council approve it?", NEWS, "Yes, unanimously.", False)
add("nw6h", "added", "Where will the line go?", NEWS,
    "It will link the downtown station with the airport and have six stops. Trains will run every 5 minutes.", False)
add("nw3h", "quote", "What did the mayor say?", NEWS,
    "Mayor Linda Park described the vote as \"a waste of taxpayer money.\"", False)

# ---------------- science abstract ----------------
SCI = ["We conducted a randomized controlled trial with 1,240 adults to evaluate the effect of daily vitamin D "
       "supplementation on respiratory infections. Over 12 months, the supplement group had 18% fewer infections "
       "than the placebo group. No significant difference was observed in hospitalization rates.",
       "Participants received 2,000 IU of vitamin D3 per day. The effect was strongest among participants with "
       "baseline vitamin D deficiency. Adverse events were rare and similar between groups."]
add("sc1", "numfmt", "How many participants were in the trial?", SCI, "The trial enrolled 1240 adults.")
add("sc2", "paraphrase", "Did vitamin D reduce infections?", SCI,
    "Yes. Over a year, people taking the supplement had 18% fewer respiratory infections than those on placebo.")
add("sc3", "short", "Did it reduce hospitalizations?", SCI, "No significant difference was found.")
add("sc4", "merge", "What dose was used and who benefited most?", SCI,
    "Participants took 2,000 IU of vitamin D3 daily, and those who were deficient at baseline benefited the most.")
add("sc5", "hedge", "Is it safe?", SCI, "Adverse events were generally rare and similar between the two groups.")
add("sc6", "according", "What was the study design?", SCI,
    "Based on the abstract, it was a randomized controlled trial of 1,240 adults over 12 months.")
add("sc7", "multipara", "Summarize the findings.", SCI,
    "This randomized controlled trial followed 1,240 adults for 12 months.\n\n"
    "The vitamin D group had 18% fewer respiratory infections than the placebo group. However, hospitalization "
    "rates did not differ significantly.\n\nThe benefit was largest for people who started out vitamin D deficient.")
add("sc8", "numfmt", "How long was the trial?", SCI, "It lasted one year.")
# twins
add("sc1h", "numfmt", "How many participants were in the trial?", SCI, "The trial enrolled 2,140 adults.", False)
add("sc2h", "negflip", "Did vitamin D reduce infections?", SCI,
    "No. People taking the supplement had the same number of respiratory infections as those on placebo.", False)
add("sc3h", "short", "Did it reduce hospitalizations?", SCI, "Yes, by 30%.", False)
add("sc4h", "numfmt", "What dose was used?", SCI, "Participants took 4,000 IU of vitamin D3 daily.", False)
add("sc5h", "added", "Is it safe?", SCI, "Adverse events were rare. No participants experienced kidney stones.", False)

# ---------------- software product / SaaS ----------------
SAAS = ["Workspaces on the Team plan can have up to 50 members. Admins can enable single sign-on (SSO) with SAML 2.0 "
        "from the Security settings page. Audit logs are retained for 90 days.",
        "Data exports are available in CSV and JSON formats. Deleted projects can be restored from the trash within "
        "30 days; after that they are permanently deleted. Two-factor authentication can be enforced for all members."]
add("sa1", "short", "How many members can a Team workspace have?", SAAS, "Up to 50.")
add("sa2", "numfmt", "How long are audit logs kept?", SAAS, "Audit logs are kept for 3 months.")
add("sa3", "numbered", "How do I turn on SSO?", SAAS,
    "1. Sign in as an admin.\n2. Open the **Security** settings page.\n3. Enable single sign-on (SSO) with SAML 2.0.")
add("sa4", "short", "Can I restore a deleted project?", SAAS, "Yes, within 30 days.")
add("sa5", "bullets", "What export formats are supported?", SAAS, "Exports are supported in:\n- CSV\n- JSON")
add("sa6", "citation", "Can we require 2FA?", SAAS,
    "Yes — two-factor authentication can be enforced for all members [1][2].")
add("sa7", "closing", "What happens to deleted projects?", SAAS,
    "Deleted projects stay in the trash for 30 days, during which you can restore them. After that, they're "
    "permanently deleted.\n\nLet me know if there's anything else I can help with.")
add("sa8", "paraphrase", "Does SSO support SAML?", SAAS, "Yes, SSO uses SAML 2.0.")
# twins
add("sa1h", "short", "How many members can a Team workspace have?", SAAS, "Up to 500.", False)
add("sa4h", "short", "Can I restore a deleted project?", SAAS, "Yes, within 90 days.", False)
add("sa5h", "bullets", "What export formats are supported?", SAAS, "Exports are supported in:\n- CSV\n- JSON\n- PDF", False)
add("sa8h", "paraphrase", "Does SSO support SAML?", SAAS, "Yes, SSO supports SAML 2.0 and OpenID Connect.", False)

# ---------------- e-commerce returns ----------------
RET = ["Items can be returned within 30 days of delivery for a full refund. Returned items must be unused and in "
       "their original packaging. Gift cards and final-sale items cannot be returned. Refunds are issued to the "
       "original payment method within 5 business days after we receive the item."]
add("rt1", "short", "Can I return a gift card?", RET, "No, gift cards can't be returned.")
add("rt2", "numfmt", "How long do I have to return something?", RET, "You have thirty days from delivery.")
add("rt3", "bullets", "What can't be returned?", RET, "The following items cannot be returned:\n- Gift cards\n- Final-sale items")
add("rt4", "numfmt", "When will I get my refund?", RET,
    "Refunds go back to your original payment method within 5 business days of us receiving the item.")
add("rt5", "according", "What condition must items be in?", RET,
    "According to the return policy, items must be unused and in their original packaging.")
add("rt6", "short", "Can I return a used item?", RET, "No, it doesn't qualify. Items must be unused.")
add("rt7", "header", "Return policy summary", RET,
    "### Returns\n\n**Window:** 30 days from delivery\n\n**Condition:** Unused, in original packaging\n\n"
    "**Refund:** To the original payment method within 5 business days")
add("rt8", "numfmt", "Is it a 30-day return window?", RET, "Yes, it's a 30-day return window from delivery.")
# twins
add("rt1h", "negflip", "Can I return a gift card?", RET, "Yes, gift cards can be returned within 30 days.", False)
add("rt2h", "numfmt", "How long do I have to return something?", RET, "You have sixty days from delivery.", False)
add("rt3h", "bullets", "What can't be returned?", RET, "The following items cannot be returned:\n- Gift cards\n- Final-sale items\n- Swimwear", False)
add("rt4h", "numfmt", "When will I get my refund?", RET,
    "Refunds go back to store credit within 5 business days of us receiving the item.", False)

# ---------------- IT / internal docs (more code) ----------------
OPS = ["To rotate database credentials, run `vault rotate db/prod` and then restart the `api-gateway` service. "
       "The `LOG_LEVEL` environment variable accepts DEBUG, INFO, WARNING and ERROR; the default is INFO. "
       "Deployments to production require two approvals in the `#deploys` channel.",
       "Backups run nightly at 02:00 UTC and are kept for 14 days. The staging cluster is rebuilt every Sunday."]
add("op1", "code", "How do I rotate the DB credentials?", OPS,
    "Run `vault rotate db/prod`, then restart the `api-gateway` service.")
add("op2", "code", "What's the default log level?", OPS, "The default `LOG_LEVEL` is `INFO`.")
add("op3", "numfmt", "How long are backups kept?", OPS, "Backups are retained for 2 weeks.")
add("op4", "short", "Do prod deploys need approval?", OPS, "Yes, two approvals in `#deploys`.")
add("op5", "bullets", "What log levels are supported?", OPS,
    "`LOG_LEVEL` accepts:\n\n- `DEBUG`\n- `INFO` (default)\n- `WARNING`\n- `ERROR`")
add("op6", "numfmt", "When do backups run?", OPS, "Backups run every night at 2 AM UTC.")
add("op7", "codeblock", "How do I rotate credentials?", OPS,
    "Run these commands:\n\n```bash\nvault rotate db/prod\n```\n\nThen restart the `api-gateway` service.")
# twins
add("op1h", "code", "How do I rotate the DB credentials?", OPS,
    "Run `vault rotate db/staging`, then restart the `api-gateway` service.", False)
add("op3h", "numfmt", "How long are backups kept?", OPS, "Backups are retained for 30 days.", False)
add("op4h", "short", "Do prod deploys need approval?", OPS, "Yes, one approval from a team lead.", False)
add("op6h", "numfmt", "When do backups run?", OPS, "Backups run every night at 4 AM UTC.", False)

# ---------------- extra styles on existing contexts ----------------
add("x1", "closing", "What is the APY?", FIN,
    "The savings account pays 4.25% APY.\n\nIs there anything else you'd like to know about the account?")
add("x2", "based", "Is there a fee for domestic wires?", FIN, "Based on the documents, yes: domestic wire transfers cost $25.")
add("x3", "citation", "How much do replacement cartridges cost?", PROD,
    "Replacement cartridges cost $29.99 each (Source: doc 2).")
add("x4", "citation", "What is the checked bag limit?", TRAV, "The checked baggage allowance is 23 kg per bag [1].")
add("x5", "quote", "When can I change my flight for free?", TRAV,
    "The policy says: \"Flights can be changed free of charge up to 48 hours before departure.\"")
add("x6", "short", "Can I change my flight the day before?", TRAV, "No, free changes are only allowed up to 48 hours before departure.")
add("x7", "numbered", "What should I know before flying?", TRAV,
    "1. **Check-in:** online check-in opens 24 hours before departure.\n"
    "2. **Carry-on:** one bag up to 7 kg plus a personal item.\n"
    "3. **Pets:** pets under 8 kg (with carrier) can travel in the cabin.")
add("x8", "hedge", "How long does construction take?", NEWS, "It's expected to take about three years.")
add("x9", "multipara", "Tell me about the warranty.", PROD,
    "The AquaPure X2 includes a 2-year limited warranty.\n\nKeep in mind that it doesn't cover damage caused by "
    "improper installation, so make sure the unit is installed correctly.")
add("x10", "code", "How many retries by default?", API, "By default, `max_retries` is set to `3`.")
add("x11", "paraphrase", "Who can enable SSO?", SAAS, "Admins can turn on SAML 2.0 single sign-on in the Security settings.")
add("x12", "numfmt", "What's the carry-over limit?", HR, "You can carry over up to five days.")
add("x13", "short", "Does parental leave require a minimum tenure?", HR, "Yes, 6 months of employment.")
add("x14", "closing", "How long is parental leave?", HR,
    "Parental leave is 16 weeks at full pay.\n\nI hope this helps!")
add("x15", "according", "How many stops will the line have?", NEWS, "According to the article, there will be six stops.")
add("x16", "short", "Is the budget over $40 million?", NEWS, "Yes, it's $45 million.")
add("x17", "unitconv", "How many months does the trial cover?", SCI, "The trial ran for 12 months (one year).")
add("x18", "bold", "What's the liability cap?", LEGAL,
    "The Provider's liability is capped at **the fees paid in the previous 12 months** before the claim.")
add("x19", "italic", "Is the agreement governed by Delaware law?", LEGAL, "*Yes* — it is governed by the laws of the State of Delaware.")
add("x20", "short", "Is vitamin D effective for respiratory infections?", SCI, "Yes, it reduced them by 18%.")
add("x21", "short", "Can I take 8 tablets a day?", MED, "No. The maximum is 6 tablets in 24 hours.")
add("x22", "short", "Do I need manager approval to work remotely?", HR, "Yes.")
add("x23", "short", "Is the filter compatible with handheld faucets?", PROD, "No, it isn't.")
add("x24", "header", "How do I handle a 429?", API,
    "## Handling rate limits\n\nA 429 response includes a `Retry-After` header. Wait for the time it indicates before retrying.", None)
add("x25", "bullets", "Which items can't be returned?", RET,
    "Two kinds of items can't be returned:\n\n1. Gift cards\n2. Final-sale items")
# twins of extras
add("x21h", "short", "Can I take 8 tablets a day?", MED, "Yes. The maximum is 8 tablets in 24 hours.", False)
add("x22h", "short", "Do I need manager approval to work remotely?", HR, "No.", False)
add("x23h", "short", "Is the filter compatible with handheld faucets?", PROD, "Yes, it is.", False)
add("x16h", "short", "Is the budget over $50 million?", NEWS, "Yes, it's $55 million.", False)
add("x13h", "short", "Does parental leave require a minimum tenure?", HR, "Yes, 12 months of employment.", False)
add("x11h", "paraphrase", "Who can enable SSO?", SAAS, "Any member can turn on SAML 2.0 single sign-on in the Security settings.", False)
add("x15h", "according", "How many stops will the line have?", NEWS, "According to the article, there will be nine stops.", False)
add("x20h", "short", "Is vitamin D effective for respiratory infections?", SCI, "Yes, it reduced them by 50%.", False)
add("x10h", "code", "How many retries by default?", API, "By default, `max_retries` is set to `5`.", False)
add("x25h", "bullets", "Which items can't be returned?", RET,
    "Two kinds of items can't be returned:\n\n1. Gift cards\n2. Opened electronics", False)

# ---------------- unit conversions stated in the context ----------------
CONV = ["Carry-on bags may weigh up to 7 kg (15 lb). The cabin bag must fit within 55 x 40 x 20 cm (22 x 16 x 8 in). "
        "The hotel is 12 km (about 7.5 miles) from the airport. Check-out is at 11:00 a.m.",
        "The maximum daily dose is 1,200 mg, which equals six 200 mg tablets. The subscription costs $1,200 per year "
        "($100 per month)."]
add("cv1", "unitconv", "How much can my carry-on weigh in pounds?", CONV, "Up to 15 pounds (7 kg).")
add("cv2", "unitconv", "What are the cabin bag dimensions in inches?", CONV, "It must fit within 22 x 16 x 8 inches.")
add("cv3", "unitconv", "How far is the hotel from the airport?", CONV, "The hotel is about 7.5 miles (12 km) from the airport.")
add("cv4", "numfmt", "What time is check-out?", CONV, "Check-out is at 11 AM.")
add("cv5", "numfmt", "How much is the subscription?", CONV, "The subscription costs 1200 dollars a year, or $100 monthly.")
add("cv6", "unitconv", "What's the max daily dose?", CONV, "The maximum daily dose is 1,200 mg, i.e. six 200 mg tablets.")
add("cv7", "numfmt", "What's the max daily dose?", CONV, "1.2 grams per day (six 200 mg tablets).")
add("cv1h", "unitconv", "How much can my carry-on weigh in pounds?", CONV, "Up to 20 pounds (9 kg).", False)
add("cv3h", "unitconv", "How far is the hotel from the airport?", CONV, "The hotel is about 12 miles from the airport.", False)
add("cv5h", "numfmt", "How much is the subscription?", CONV, "The subscription costs 1200 dollars a year, or $120 monthly.", False)
