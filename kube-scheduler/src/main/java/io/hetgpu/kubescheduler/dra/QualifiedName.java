package io.hetgpu.kubescheduler.dra;

/** An attribute's or capacity's name split into domain and id; a name without a domain is the driver's. */
record QualifiedName(String domain, String id) {

    static QualifiedName of(String name, String driver) {
        var slash = name.indexOf('/');
        return slash < 0 ? new QualifiedName(driver, name) : new QualifiedName(name.substring(0, slash), name.substring(slash + 1));
    }
}
