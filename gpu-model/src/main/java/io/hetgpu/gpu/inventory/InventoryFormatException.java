package io.hetgpu.gpu.inventory;

/** An annotation's JSON is not what hetgpu writes; the message names the field and quotes the value. */
public final class InventoryFormatException extends Exception {

    public InventoryFormatException(String message) {
        super(message);
    }
}
