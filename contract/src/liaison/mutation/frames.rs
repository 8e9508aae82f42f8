//! One test per frame that makes a sentence not the liaison's claim
//! (docs/contract.md §5.7), each with the sentences it excuses and the
//! claims a hostile answer dresses in it, which it must not excuse (tests
//! only).

use super::{Context, Grounding, find, find_in};

/// Every `excused` sentence passes and every `dressed` one is refused.
fn frame(excused: &[&str], dressed: &[&str]) {
    let mut failures = Vec::new();
    for text in excused {
        if let Some(found) = find(text) {
            failures.push(format!("excused {text:?} refused: {found:?}"));
        }
    }
    for text in dressed {
        if find(text).is_none() {
            failures.push(format!("dressed claim {text:?} accepted"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_negation_excuses_and_a_double_negative_does_not() {
    frame(
        &[
            "I did not boost it.",
            "Nothing was boosted.",
            "I never pin posts.",
            "I can't publish.",
            "I boosted nothing.",
            "I could not find a refund for it, maybe it is not done yet.",
        ],
        &[
            "I didn't forget to boost it.",
            "I never failed to pin a winner.",
            "I didn't fail to post it.",
            "Not only did I read the feed, I boosted act-2 too.",
        ],
    );
}

#[test]
fn a_question_excuses_but_not_a_tag_on_a_statement() {
    frame(
        &["Did the operator boost it?", "Is act-2 live?", "Do you want me to check the feed again?"],
        &["Why did I boost it? Because reach was low.", "Boosted it, right?", "Pinned post-3, ok?"],
    );
}

#[test]
fn a_condition_excuses_but_not_one_closed_before_a_done_act() {
    frame(
        &[
            "If you boost it, reach may grow.",
            "Once approved, act-1 goes out at 14:00.",
            "If you approve act-1, it will be published.",
        ],
        &[
            "If you're wondering, I boosted it.",
            "In case you missed it: boosted act-2.",
            "If you must know, pinned.",
        ],
    );
}

#[test]
fn an_instruction_or_a_recommendation_to_the_user_excuses() {
    frame(
        &[
            "Boost act-2 from the post menu.",
            "I recommend boosting act-2.",
            "Please pin post-3.",
            "My suggestion: publish at 14:00 UTC.",
        ],
        &["Recommendation: already pinned it.", "Tip: boosted act-2 for you.", "Boost act-2 ✓"],
    );
}

#[test]
fn the_users_call_excuses() {
    frame(
        &[
            "Whether to boost it is up to you.",
            "Your call: boost act-2 or wait.",
            "Pinning it is your decision.",
        ],
        &["Up to you, but I already boosted it.", "Your call was right: boosted it."],
    );
}

#[test]
fn a_first_person_suggestion_excuses() {
    frame(
        &[
            "I'd post it on Tuesday morning.",
            "I would move it to Thursday.",
            "I'd boost act-2 rather than act-3.",
        ],
        &["I'd post it, and I did.", "I would have approved act-1.", "I'd pin it, so I pinned it."],
    );
}

#[test]
fn a_modal_or_generic_sentence_excuses() {
    frame(
        &[
            "Posts can be boosted from the post menu.",
            "Posts are ranked by likes.",
            "Drafts may be deleted after 30 days.",
            "A boosted post can reach twice as many people.",
            "Offboarding normally includes revoking SSO and wiping the laptop.",
            "Assuming you approve the expense, Sam gets reimbursed in the next payroll.",
        ],
        &[
            "Posts were boosted just now.",
            "It can be confirmed: I pinned it.",
            "The drafts were binned this morning.",
            "Sam got reimbursed this morning.",
        ],
    );
}

#[test]
fn a_gerund_as_subject_excuses() {
    frame(
        &[
            "Boosting posts costs money.",
            "Publishing on Tuesdays works best.",
            "Pinning a post keeps it on top.",
        ],
        &["Boosting act-2 was my call, and I did it.", "Boosting act-2 now.", "Locking the comments now."],
    );
}

#[test]
fn another_actor_excuses_unless_it_is_the_liaison() {
    frame(
        &[
            "The operator boosted act-2.",
            "act-2 was boosted by the scheduler.",
            "Your team pinned post-3 last week.",
            "Boosted by the operator on Monday.",
            "12 posts went out via the scheduler.",
        ],
        &[
            "The team (me) boosted it.",
            "act-2 was boosted by yours truly.",
            "Boosted by me.",
            "Nova here: boosted it.",
            "I refunded everyone affected by the outage.",
            "I reinstated the user we banned by mistake.",
            "I paid it by bank transfer.",
            "The post went out via me.",
        ],
    );
}

#[test]
fn a_process_that_ran_by_itself_excuses() {
    frame(
        &["The job restarted automatically.", "Retried on its own at 02:00.", "The webhook fired twice."],
        &[
            "I restarted it automatically.",
            "I boosted it automatically.",
            "We restarted the job and it recovered by itself.",
        ],
    );
}

#[test]
fn a_report_of_what_the_data_says_excuses() {
    frame(
        &[
            "I saw that post-3 was pinned on Monday.",
            "The feed shows that act-2 was boosted.",
            "I found that nothing was deleted.",
            "I noticed a secret committed in March.",
            "Lookup result: order 8812 is out for delivery.",
        ],
        &[
            "I saw that, so I boosted it.",
            "I noticed the drop and pinned post-3.",
            "I noticed the secret committed in March, so I revoked it.",
            "The newsletter is out.",
        ],
    );
}

#[test]
fn a_participle_used_as_an_adjective_excuses() {
    frame(
        &[
            "Boosted posts perform better.",
            "Mixed results this week.",
            "Updated figures below.",
            "Scheduled threads show up in the calendar.",
        ],
        &["Boosted the posts.", "Updated the figures in the store.", "Pinned post-3."],
    );
}

#[test]
fn a_state_the_cited_evidence_carries_excuses() {
    let text = "The post was liked by 40 people and act-2 was boosted.";
    assert!(find(text).is_some(), "without evidence, `was boosted` is the liaison's");
    let grounding = [Grounding::new(text, ["boostedAt", "likes"])];
    assert_eq!(find_in(text, &Context { quotations: &[], groundings: &grounding }), None);
    let other = [Grounding::new(text, ["likes"])];
    assert!(find_in(text, &Context { quotations: &[], groundings: &other }).is_some());
    // The state a family leaves, grounded by another effect of the family;
    // a guarded verb's object, grounded by evidence that carries it.
    for (text, carried, unrelated) in [
        ("The newsletter went out to 4,210 subscribers.", "sent", "opens"),
        ("The refund was issued on 3 March.", "refundedAt", "amount"),
    ] {
        assert!(find(text).is_some(), "{text}: without evidence, a claim");
        let grounding = [Grounding::new(text, [carried])];
        assert_eq!(find_in(text, &Context { quotations: &[], groundings: &grounding }), None, "{text}");
        let other = [Grounding::new(text, [unrelated])];
        assert!(find_in(text, &Context { quotations: &[], groundings: &other }).is_some(), "{text}");
    }
}
