//! The `ask` stage: an answer given wins, then the runtime's asker is asked
//! (an MCP client's user), else the default is taken.

mod engine_util;

use std::sync::{Arc, Mutex};

use engine::Registry;
use engine_util::{failure, value_of, Project};
use futures::future::BoxFuture;
use serde_json::{json, Value};

const PICK: &str = "pipeline: pick\ninputs:\n  answer: {type: any}\noutput: \"{{ pick }}\"\nstages:\n  pick:\n    ask: {prompt: \"Which one?\", choices: [red, green, blue], answer: \"{{ inputs.answer }}\", default: green}\n";

#[tokio::test]
async fn ask_takes_the_given_answer_else_the_default() {
    let p = Project::new();
    p.pipeline("pick", PICK);
    let (by_name, _) = p.run("pick", &Registry::new(), json!({"answer": "blue"}), None).await;
    assert_eq!(value_of(&by_name), json!("blue"));
    let (by_index, _) = p.run("pick", &Registry::new(), json!({"answer": 0}), None).await;
    assert_eq!(value_of(&by_index), json!("red"));
    let (defaulted, output) = p.run("pick", &Registry::new(), json!({"answer": null}), None).await;
    assert_eq!(value_of(&defaulted), json!("green"));
    assert_eq!(output.captured(), "", "non-interactive runs ask nothing");
    let (bad, _) = p.run("pick", &Registry::new(), json!({"answer": "purple"}), None).await;
    assert!(failure(&bad).contains("not one of the choices"), "{}", failure(&bad));
}

/// Answers every question with `answer` (None: declines), noting each prompt.
struct Person {
    answer: Option<Value>,
    asked: Mutex<Vec<String>>,
}

impl engine::Asker for Person {
    fn ask<'a>(&'a self, prompt: &'a str, choices: &'a [Value]) -> BoxFuture<'a, Result<Option<Value>, String>> {
        self.asked
            .lock()
            .unwrap()
            .push(format!("{prompt} {}", Value::from(choices.to_vec())));
        Box::pin(std::future::ready(Ok(self.answer.clone())))
    }
}

#[tokio::test]
async fn ask_puts_an_unanswered_question_to_the_runtimes_asker() {
    let p = Project::new();
    p.pipeline("pick", PICK);
    let pipeline = p
        .compile_with("pick", &Registry::new(), &Default::default(), true)
        .unwrap_or_else(|d| panic!("{d}"));
    let run = |answer: Option<Value>, given: Value| {
        let person = Arc::new(Person {
            answer,
            asked: Mutex::default(),
        });
        let rt = p.runtime(None).with_asker(Some(person.clone()));
        let inputs = pipeline
            .bind_inputs(json!({ "answer": given }).as_object().cloned().unwrap())
            .unwrap();
        let pipeline = pipeline.clone();
        async move {
            let outcome = engine::run(&pipeline, inputs, &rt).await;
            let asked = person.asked.lock().unwrap().clone();
            (value_of(&outcome), asked)
        }
    };
    let (chosen, asked) = run(Some(json!(2)), Value::Null).await;
    assert_eq!(chosen, json!("blue"));
    assert_eq!(asked, [r#"Which one? ["red","green","blue"]"#]);
    let (declined, _) = run(None, Value::Null).await;
    assert_eq!(declined, json!("green"), "a declined question takes the default");
    let (given, asked) = run(Some(json!(2)), json!("red")).await;
    assert_eq!(
        (given, asked.len()),
        (json!("red"), 0),
        "an answer given is not asked again"
    );
}
