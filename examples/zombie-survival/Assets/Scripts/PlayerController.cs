using UnityEngine;

public class PlayerController : MonoBehaviour
{
    public float speed = 5f;
}
