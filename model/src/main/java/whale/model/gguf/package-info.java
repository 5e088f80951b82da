/**
 * llama.cpp GGUF files as Hugging Face model directories ({@code whale import-gguf}).
 *
 * <ul>
 *   <li>{@link whale.model.gguf.GgufFile}: memory-mapped reader of GGUF v2/v3 (metadata of every
 *       type, tensor infos, alignment), every size checked when opened;
 *   <li>{@link whale.model.gguf.GgmlType}, {@link whale.model.gguf.Dequantizer}: ggml's types and
 *       their float32 decoding, bit for bit as gguf-py's {@code dequantize};
 *   <li>{@link whale.model.gguf.GgufImporter}: a Llama GGUF to config.json, model.safetensors
 *       (q/k rows un-permuted) and generation_config.json, written beside {@code --out} and
 *       renamed into place; {@code GgufTokenizer} the tokenizer files from the
 *       {@code tokenizer.*} keys.
 * </ul>
 *
 * <p>Tested on a tiny Llama GGUF the tests write themselves, against the goldens of
 * src/test/python/make_gguf_fixtures.py (gguf-py, Hugging Face tokenizers, transformers).
 */
package whale.model.gguf;
