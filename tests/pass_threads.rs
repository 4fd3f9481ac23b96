//! One thread a forward pass, passes side by side (`embed::one_thread_per_pass`,
//! which the binary calls first thing). Its own test binary: it sets
//! process-wide thread counts, once, before any other thread starts.

mod common;

use agentfinder_skills::embed::{one_thread_per_pass, PassThreads, SentenceModel};
use candle_core::Device;
use common::*;

#[test]
fn passes_run_on_one_thread_each_and_side_by_side_with_the_same_vectors() {
    // What CI or a user may have set would change the outcome: this test
    // checks the default.
    std::env::remove_var("CANDLE_NUM_THREADS");
    std::env::remove_var("RAYON_NUM_THREADS");
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert_eq!(
        one_thread_per_pass(),
        PassThreads::OneThreadEach {
            side_by_side: cores
        }
    );
    // candle runs each operation on one thread; rayon's pool, which runs
    // the batches side by side, keeps one thread per core.
    assert_eq!(candle_core::utils::get_num_threads(), 1);
    assert_eq!(rayon::current_num_threads(), cores);
    // A second call finds the choice made and changes nothing.
    assert_eq!(one_thread_per_pass(), PassThreads::CandleThreadsSet);
    assert_eq!(rayon::current_num_threads(), cores);

    let Some(dir) = model_dir() else { return };
    let model = SentenceModel::load(&dir, 256, Device::Cpu).unwrap();
    // One thread a pass computes the reference implementation's vectors,
    // whether the batches run one after another or side by side.
    let (texts, expected) = reference_embeddings();
    let together = model.embed(&texts).unwrap();
    let apart: Vec<Vec<f32>> = {
        use rayon::prelude::*;
        let pairs: Vec<Vec<Vec<f32>>> = texts
            .par_chunks(2)
            .map(|pair| model.embed(pair).unwrap())
            .collect();
        pairs.into_iter().flatten().collect()
    };
    assert_eq!(together.len(), expected.len());
    for ((a, b), e) in together.iter().zip(&apart).zip(&expected) {
        let max_diff = |x: &[f32], y: &[f32]| {
            x.iter()
                .zip(y)
                .map(|(p, q)| (p - q).abs())
                .fold(0.0, f32::max)
        };
        assert!(
            max_diff(a, e) < 1e-3,
            "differs from the reference by {}",
            max_diff(a, e)
        );
        assert!(
            max_diff(a, b) < 1e-5,
            "side by side differs by {}",
            max_diff(a, b)
        );
    }
}
