from ultralytics import YOLO

YOLO("yolov8s.pt").train(data="parts.yaml", imgsz=600, epochs=50, batch=8)
