/**
 * Hugging Face Llama-family checkpoints as whale's policy, in DJL.
 *
 * <ul>
 *   <li>{@link whale.model.hf.Safetensors}: memory-mapped reader (single file or sharded via
 *       model.safetensors.index.json; F32/F16/BF16 widened to float32, since BF16 arrays abort the
 *       JVM in DJL's PyTorch engine) and a float32 writer;
 *   <li>{@link whale.model.hf.HfConfig}: config.json read and validated (architectures, RoPE type
 *       default/llama3, no sliding window), transformers 4 and 5 layouts;
 *   <li>{@link whale.model.hf.LlamaDecoder}: the decoder (Llama, Llama 3 RoPE, Mistral, Qwen2 q/k/v
 *       bias, Qwen3 q/k norm), Hugging Face weight names one to one, optional LoRA per projection;
 *   <li>{@link whale.model.hf.KvSampler}: batched KV-cache sampling, filtering and draws on the
 *       device;
 *   <li>{@link whale.model.hf.HfTokenizer}: tokenizer.json via DJL's tokenizers, EOS/pad resolved as
 *       transformers does;
 *   <li>{@link whale.model.hf.SftTrainer}, {@link whale.model.hf.LoraAdapters}: masked SFT, full or
 *       LoRA, with whale's AdamW;
 *   <li>{@link whale.model.hf.HfModel}: all of it as a {@link whale.model.Generator} with
 *       sft/save/resume; {@link whale.model.hf.HfExport} writes PEFT and model directories;
 *       {@link whale.model.hf.Generate} is the core of {@code whale generate}.
 * </ul>
 *
 * <p>Parity with transformers is tested on the tiny fixtures of src/test/resources/hf/, built by
 * src/test/python/make_hf_fixtures.py.
 */
package whale.model.hf;
