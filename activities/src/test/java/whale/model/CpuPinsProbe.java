package whale.model;

import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;

/**
 * One process of {@link CpuPinsTest}: starts the engine as a worker does, runs a matrix product
 * (so MKL has initialised), and prints what ATen and MKL chose.
 */
public final class CpuPinsProbe {
  public static void main(String[] args) {
    System.out.println(whale.model.EngineSettings.startEngine());
    try (NDManager m = NDManager.newBaseManager()) {
      m.ones(new Shape(64, 64)).matMul(m.ones(new Shape(64, 64))).sum().getFloat();
    }
    System.out.println("aten=" + CpuPins.atenCapability());
    System.out.println("mkl=" + CpuPins.mklBranch());
  }
}
